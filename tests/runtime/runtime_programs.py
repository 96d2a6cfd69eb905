"""Small guest programs in the abstract machine model (typed pointers, addrspace(1) GC pointers).

Each is a whole module against the runtime ABI; ``EXPECTED`` gives what it prints and returns.
"""

import subprocess

from gctoy import passes
from gctoy.ir import parse_module, print_module

ABI = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @print_i64(i64)
declare void @gc_collect()
declare void @do_safepoint()
"""

# A list of 10 nodes {value, next}, a forced collection, then a walk that prints and sums.
LIST = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %head = phi i8 addrspace(1)* [null, %entry], [%n, %loop]
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 2)
  %f0 = bitcast i8 addrspace(1)* %n to i64 addrspace(1)*
  store i64 %i, i64 addrspace(1)* %f0
  %f1p = getelementptr i8, i8 addrspace(1)* %n, i64 8
  %f1 = bitcast i8 addrspace(1)* %f1p to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %f1
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, 10
  br i1 %c, label %loop, label %walk0
walk0:
  call void @gc_collect()
  br label %walk
walk:
  %p = phi i8 addrspace(1)* [%n, %walk0], [%next, %walk]
  %s = phi i64 [0, %walk0], [%s1, %walk]
  %pf0 = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %pf0
  call void @print_i64(i64 %v)
  %s1 = add i64 %s, %v
  %pf1p = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %pf1 = bitcast i8 addrspace(1)* %pf1p to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %pf1
  %done = icmp eq i8 addrspace(1)* %next, null
  br i1 %done, label %out, label %walk
out:
  ret i64 %s1
}
"""

# A binary tree built recursively (nodes {left, right, value}; mask 0b011), summed recursively:
# GC pointers live in several frames at once.
TREE = ABI + """
define i8 addrspace(1)* @build(i64 %d) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %mk, label %inner
inner:
  %d1 = sub i64 %d, 1
  %l = call i8 addrspace(1)* @build(i64 %d1)
  %r = call i8 addrspace(1)* @build(i64 %d1)
  %n = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %lp = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %lp
  %rp0 = getelementptr i8, i8 addrspace(1)* %n, i64 8
  %rp = bitcast i8 addrspace(1)* %rp0 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %rp
  %vp0 = getelementptr i8, i8 addrspace(1)* %n, i64 16
  %vp = bitcast i8 addrspace(1)* %vp0 to i64 addrspace(1)*
  store i64 %d, i64 addrspace(1)* %vp
  ret i8 addrspace(1)* %n
mk:
  %m = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %mvp0 = getelementptr i8, i8 addrspace(1)* %m, i64 16
  %mvp = bitcast i8 addrspace(1)* %mvp0 to i64 addrspace(1)*
  store i64 100, i64 addrspace(1)* %mvp
  ret i8 addrspace(1)* %m
}

define i64 @sum(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %t, null
  br i1 %isnull, label %zero, label %node
zero:
  ret i64 0
node:
  call void @do_safepoint()
  %lp = bitcast i8 addrspace(1)* %t to i8 addrspace(1)* addrspace(1)*
  %l = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %lp
  %sl = call i64 @sum(i8 addrspace(1)* %l)
  %rp0 = getelementptr i8, i8 addrspace(1)* %t, i64 8
  %rp = bitcast i8 addrspace(1)* %rp0 to i8 addrspace(1)* addrspace(1)*
  %r = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %rp
  %sr = call i64 @sum(i8 addrspace(1)* %r)
  %vp0 = getelementptr i8, i8 addrspace(1)* %t, i64 16
  %vp = bitcast i8 addrspace(1)* %vp0 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %vp
  %a = add i64 %sl, %sr
  %b = add i64 %a, %v
  ret i64 %b
}

define i64 @main() gc "statepoint-example" {
entry:
  %t = call i8 addrspace(1)* @build(i64 5)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  call void @gc_collect()
  %s = call i64 @sum(i8 addrspace(1)* %t)
  call void @print_i64(i64 %s)
  %s2 = call i64 @sum(i8 addrspace(1)* %t)
  %d = sub i64 %s2, %s
  ret i64 %d
}
"""

# A derived pointer (a GEP to field 3 of a 5-field object) kept live across calls and used after them.
DERIVED = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 5, i64 0)
  %f3b = getelementptr i8, i8 addrspace(1)* %o, i64 24
  %f3 = bitcast i8 addrspace(1)* %f3b to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %f3
  %other = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %f3
  call void @print_i64(i64 %v)
  %w = add i64 %v, 35
  store i64 %w, i64 addrspace(1)* %f3
  call void @gc_collect()
  %f0 = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  %x = load i64, i64 addrspace(1)* %f0
  %f3again = load i64, i64 addrspace(1)* %f3
  call void @print_i64(i64 %f3again)
  %r = add i64 %x, %f3again
  ret i64 %r
}
"""

# Loops with phis of GC pointers: two objects swap places every iteration; a counter object
# is replaced by a fresh copy each time, so most allocations die young.
SWAP = ABI + """
define i64 @main() gc "statepoint-example" {
entry:
  %a0 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %b0 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %bv = bitcast i8 addrspace(1)* %b0 to i64 addrspace(1)*
  store i64 1000, i64 addrspace(1)* %bv
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %a = phi i8 addrspace(1)* [%a0, %entry], [%b, %loop]
  %b = phi i8 addrspace(1)* [%b0, %entry], [%c, %loop]
  %ap = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %av = load i64, i64 addrspace(1)* %ap
  %c = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %cp = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %nv = add i64 %av, %i
  store i64 %nv, i64 addrspace(1)* %cp
  %i1 = add i64 %i, 1
  %k = icmp slt i64 %i1, 400
  br i1 %k, label %loop, label %out
out:
  %bp = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %r1 = load i64, i64 addrspace(1)* %bp
  %cp2 = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %r2 = load i64, i64 addrspace(1)* %cp2
  call void @print_i64(i64 %r1)
  call void @print_i64(i64 %r2)
  %r = add i64 %r1, %r2
  ret i64 %r
}
"""


def _tree_sum(d):
    return 100 if d == 0 else 2 * _tree_sum(d - 1) + d


def _swap_expect():
    a, b = 0, 1000
    for i in range(400):
        c = a + i
        last_b = b
        a, b = b, c
    return [last_b, c], last_b + c


EXPECTED = {
    "list": ([9, 8, 7, 6, 5, 4, 3, 2, 1, 0], 45),
    "tree": ([_tree_sum(5)], 0),
    "derived": ([7, 42], 42),
    "swap": _swap_expect(),
}
PROGRAMS = {"list": LIST, "tree": TREE, "derived": DERIVED, "swap": SWAP}


def compile_program(text, tmp_path, llvm14, name="prog", rs4gc="opt", opt_flags=(), llc_flags=()):
    """Abstract-machine IR -> RS4GC (LLVM's opt or gctoy's pass) -> llc -O2 -filetype=obj."""
    src = tmp_path / f"{name}.ll"
    rewritten = tmp_path / f"{name}.rs4gc.ll"
    obj = tmp_path / f"{name}.o"
    src.write_text(text)
    if rs4gc == "opt":
        subprocess.run(
            [str(llvm14.opt), "-passes=rewrite-statepoints-for-gc", *opt_flags, "-S", str(src), "-o", str(rewritten)],
            check=True, capture_output=True,
        )
    else:
        module = parse_module(text)
        passes.run(module, "rewrite-statepoints-for-gc")
        rewritten.write_text(print_module(module))
    subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", *llc_flags, str(rewritten), "-o", str(obj)],
                   check=True, capture_output=True)
    return obj
