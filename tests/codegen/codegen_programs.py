"""IR test programs for the x86-64 code generator: each has `i64 @main()` and prints through `@print_i64`."""

from __future__ import annotations

PRINT_DECL = "declare void @print_i64(i64)\n"

ARITHMETIC = PRINT_DECL + """
define i64 @main() {
entry:
  %a = add i64 40, 2
  call void @print_i64(i64 %a)
  %b = sub i64 3, 10
  call void @print_i64(i64 %b)
  %c = mul i64 %b, -6
  call void @print_i64(i64 %c)
  %d = sdiv i64 -17, 5
  call void @print_i64(i64 %d)
  %e = srem i64 -17, 5
  call void @print_i64(i64 %e)
  %f = udiv i64 -1, 3
  call void @print_i64(i64 %f)
  %g = urem i64 1000, 7
  call void @print_i64(i64 %g)
  %h = shl i64 1, 40
  call void @print_i64(i64 %h)
  %i = ashr i64 -256, 4
  call void @print_i64(i64 %i)
  %j = lshr i64 -256, 60
  call void @print_i64(i64 %j)
  %k = and i64 12345, 255
  %l = or i64 %k, 4096
  %m = xor i64 %l, 65535
  call void @print_i64(i64 %m)
  %big = add i64 4294967296, 123456789012
  call void @print_i64(i64 %big)
  ret i64 %m
}
"""

NARROW = PRINT_DECL + """
define i64 @main() {
entry:
  %a = add i32 2147483647, 1
  %a64 = sext i32 %a to i64
  call void @print_i64(i64 %a64)
  %z64 = zext i32 %a to i64
  call void @print_i64(i64 %z64)
  %b = mul i8 100, 3
  %b64 = zext i8 %b to i64
  call void @print_i64(i64 %b64)
  %bs = sext i8 %b to i64
  call void @print_i64(i64 %bs)
  %c = sdiv i32 -100, 7
  %c64 = sext i32 %c to i64
  call void @print_i64(i64 %c64)
  %d = ashr i8 -128, 3
  %d64 = sext i8 %d to i64
  call void @print_i64(i64 %d64)
  %e = icmp slt i32 -1, 1
  %e64 = zext i1 %e to i64
  call void @print_i64(i64 %e64)
  %f = icmp ult i32 -1, 1
  %f64 = zext i1 %f to i64
  call void @print_i64(i64 %f64)
  %g = trunc i64 -1 to i8
  %g64 = zext i8 %g to i64
  call void @print_i64(i64 %g64)
  %t = icmp sgt i8 %g, 0
  %ts = sext i1 %t to i64
  call void @print_i64(i64 %ts)
  %s = select i1 %e, i64 11, i64 22
  call void @print_i64(i64 %s)
  %s2 = select i1 %f, i64 11, i64 22
  call void @print_i64(i64 %s2)
  %u = udiv i16 65535, 2
  %u64 = zext i16 %u to i64
  call void @print_i64(i64 %u64)
  ret i64 %s2
}
"""

LOOP_PHIS = PRINT_DECL + """
define i64 @main() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %x = phi i64 [ 1, %entry ], [ %y, %loop ]
  %y = phi i64 [ 2, %entry ], [ %x, %loop ]
  %sum = phi i64 [ 0, %entry ], [ %sum.next, %loop ]
  %t = mul i64 %x, 10
  %sum.next = add i64 %sum, %t
  call void @print_i64(i64 %sum.next)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, 7
  br i1 %more, label %loop, label %exit
exit:
  ret i64 %sum.next
}
"""

RECURSION = PRINT_DECL + """
define i64 @fact(i64 %n) {
entry:
  %small = icmp sle i64 %n, 1
  br i1 %small, label %one, label %rec
one:
  ret i64 1
rec:
  %m = sub i64 %n, 1
  %r = call i64 @fact(i64 %m)
  %p = mul i64 %n, %r
  ret i64 %p
}

define i64 @fib(i64 %n) {
entry:
  %small = icmp slt i64 %n, 2
  br i1 %small, label %done, label %rec
rec:
  %a = sub i64 %n, 1
  %b = sub i64 %n, 2
  %fa = call i64 @fib(i64 %a)
  %fb = call i64 @fib(i64 %b)
  %s = add i64 %fa, %fb
  ret i64 %s
done:
  ret i64 %n
}

define i64 @main() {
entry:
  %f = call i64 @fact(i64 20)
  call void @print_i64(i64 %f)
  %g = call i64 @fib(i64 15)
  call void @print_i64(i64 %g)
  %r = add i64 %f, %g
  ret i64 %r
}
"""

MANY_ARGS = PRINT_DECL + """
define i64 @weigh(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g, i64 %h, i32 %i) {
entry:
  %t1 = mul i64 %b, 2
  %t2 = mul i64 %c, 3
  %t3 = mul i64 %d, 4
  %t4 = mul i64 %e, 5
  %t5 = mul i64 %f, 6
  %t6 = mul i64 %g, 7
  %t7 = mul i64 %h, 8
  %i64 = sext i32 %i to i64
  %t8 = mul i64 %i64, 9
  %s1 = add i64 %a, %t1
  %s2 = add i64 %s1, %t2
  %s3 = add i64 %s2, %t3
  %s4 = add i64 %s3, %t4
  %s5 = add i64 %s4, %t5
  %s6 = add i64 %s5, %t6
  %s7 = add i64 %s6, %t7
  %s8 = add i64 %s7, %t8
  ret i64 %s8
}

define i64 @main() {
entry:
  %r = call i64 @weigh(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i32 -9)
  call void @print_i64(i64 %r)
  ret i64 %r
}
"""

MEMORY = PRINT_DECL + """
%pair = type { i8, i64, i32 }

@table = global [4 x i64] [i64 5, i64 -6, i64 7, i64 8]
@counter = global i32 3

define i64 @main() {
entry:
  %arr = alloca [8 x i64]
  %p = alloca %pair
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i.next, %fill ]
  %slot = getelementptr [8 x i64], [8 x i64]* %arr, i64 0, i64 %i
  %sq = mul i64 %i, %i
  store i64 %sq, i64* %slot
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, 8
  br i1 %more, label %fill, label %sum
sum:
  %j32 = trunc i64 5 to i32
  %s5 = getelementptr [8 x i64], [8 x i64]* %arr, i32 0, i32 %j32
  %v5 = load i64, i64* %s5
  call void @print_i64(i64 %v5)
  %first = getelementptr [8 x i64], [8 x i64]* %arr, i64 0, i64 0
  %back = getelementptr i64, i64* %s5, i64 -2
  %v3 = load i64, i64* %back
  call void @print_i64(i64 %v3)
  %f0 = getelementptr %pair, %pair* %p, i32 0, i32 0
  %f1 = getelementptr %pair, %pair* %p, i32 0, i32 1
  %f2 = getelementptr %pair, %pair* %p, i32 0, i32 2
  store i8 -1, i8* %f0
  store i64 -77, i64* %f1
  store i32 -5, i32* %f2
  %l0 = load i8, i8* %f0
  %l0w = zext i8 %l0 to i64
  call void @print_i64(i64 %l0w)
  %l1 = load i64, i64* %f1
  call void @print_i64(i64 %l1)
  %l2 = load i32, i32* %f2
  %l2w = sext i32 %l2 to i64
  call void @print_i64(i64 %l2w)
  %a0 = ptrtoint i64* %first to i64
  %a1 = ptrtoint i64* %f1 to i64
  %raw = bitcast %pair* %p to i8*
  %raw8 = getelementptr i8, i8* %raw, i64 8
  %as64 = bitcast i8* %raw8 to i64*
  %l1again = load i64, i64* %as64
  call void @print_i64(i64 %l1again)
  %ip = inttoptr i64 %a1 to i64*
  %l1third = load i64, i64* %ip
  call void @print_i64(i64 %l1third)
  %t2 = getelementptr [4 x i64], [4 x i64]* @table, i64 0, i64 1
  %tv = load i64, i64* %t2
  call void @print_i64(i64 %tv)
  %c = load i32, i32* @counter
  %c1 = add i32 %c, 10
  store i32 %c1, i32* @counter
  %c2 = load i32, i32* @counter
  %cw = zext i32 %c2 to i64
  call void @print_i64(i64 %cw)
  %diff = sub i64 %a1, %a0
  %nonneg = icmp ne i64 %diff, 0
  %r = select i1 %nonneg, i64 %v5, i64 0
  ret i64 %r
}
"""

SWITCH = PRINT_DECL + """
define i64 @classify(i32 %x) {
entry:
  switch i32 %x, label %other [ i32 0, label %zero
                                i32 1, label %one
                                i32 -3, label %minus3
                                i32 7, label %one ]
zero:
  ret i64 100
one:
  %p = phi i64 [ 200, %entry ], [ 200, %entry ]
  ret i64 %p
minus3:
  ret i64 300
other:
  %w = sext i32 %x to i64
  ret i64 %w
}

define i64 @main() {
entry:
  br label %loop
loop:
  %i = phi i32 [ -4, %entry ], [ %i.next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %loop ]
  %c = call i64 @classify(i32 %i)
  call void @print_i64(i64 %c)
  %acc.next = add i64 %acc, %c
  %i.next = add i32 %i, 1
  %more = icmp sle i32 %i.next, 8
  br i1 %more, label %loop, label %done
done:
  ret i64 %acc.next
}
"""

PROGRAMS = {
    "arithmetic": ARITHMETIC,
    "narrow": NARROW,
    "loop_phis": LOOP_PHIS,
    "recursion": RECURSION,
    "many_args": MANY_ARGS,
    "memory": MEMORY,
    "switch": SWITCH,
}
