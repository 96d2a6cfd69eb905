"""Programs for the wide-value and floating-point tests: vectors, i128, first-class aggregates, SSE arithmetic."""

PRINT_DECL = "declare void @print_i64(i64)\n"

# Vectors in registers, on the stack and through a hidden result pointer; lanes read and written with
# constant and variable indices; shuffles, vector GEPs, phis, selects, loads and stores.
VECTORS = PRINT_DECL + """
define <2 x i64> @swap(<2 x i64> %v) {
  %s = shufflevector <2 x i64> %v, <2 x i64> <i64 40, i64 50>, <2 x i32> <i32 1, i32 2>
  ret <2 x i64> %s
}

define <4 x i32> @bump(<4 x i32> %a, i64 %k, <4 x i32> %b) {
  %x = extractelement <4 x i32> %a, i64 %k
  %y = extractelement <4 x i32> %b, i32 3
  %s = add i32 %x, %y
  %r = insertelement <4 x i32> %b, i32 %s, i64 %k
  ret <4 x i32> %r
}

define <8 x i64> @last(<8 x i64> %v, i64 %d) {
  %w = insertelement <8 x i64> %v, i64 %d, i32 7
  ret <8 x i64> %w
}

define <16 x i64> @same(<16 x i64> %v, <2 x i64> %tail) {
  %t = extractelement <2 x i64> %tail, i32 1
  %w = insertelement <16 x i64> %v, i64 %t, i32 15
  ret <16 x i64> %w
}

define i64 @main() {
entry:
  %a0 = insertelement <2 x i64> undef, i64 7, i32 0
  %a = insertelement <2 x i64> %a0, i64 9, i32 1
  %s = call <2 x i64> @swap(<2 x i64> %a)
  %s0 = extractelement <2 x i64> %s, i32 0
  %s1 = extractelement <2 x i64> %s, i32 1
  call void @print_i64(i64 %s0)
  call void @print_i64(i64 %s1)
  %b = call <4 x i32> @bump(<4 x i32> <i32 1, i32 2, i32 3, i32 4>, i64 2, <4 x i32> <i32 10, i32 20, i32 30, i32 -5>)
  %b2 = extractelement <4 x i32> %b, i64 2
  %sum = add <4 x i32> %b, <i32 1, i32 1, i32 1, i32 -100>
  %half = ashr <4 x i32> %sum, <i32 1, i32 1, i32 1, i32 2>
  %b3 = extractelement <4 x i32> %half, i64 3
  %w2 = sext i32 %b2 to i64
  %w3 = sext i32 %b3 to i64
  call void @print_i64(i64 %w2)
  call void @print_i64(i64 %w3)
  %big = call <8 x i64> @last(<8 x i64> <i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8>, i64 99)
  %l6 = extractelement <8 x i64> %big, i32 6
  %l7 = extractelement <8 x i64> %big, i32 7
  call void @print_i64(i64 %l6)
  call void @print_i64(i64 %l7)
  %h = call <16 x i64> @same(<16 x i64> zeroinitializer, <2 x i64> <i64 3, i64 123>)
  %h15 = extractelement <16 x i64> %h, i32 15
  %h14 = extractelement <16 x i64> %h, i32 14
  call void @print_i64(i64 %h15)
  call void @print_i64(i64 %h14)
  %mem = alloca [4 x i64], align 16
  %m0 = getelementptr [4 x i64], [4 x i64]* %mem, i64 0, i64 0
  %mv = bitcast i64* %m0 to <4 x i64>*
  store <4 x i64> <i64 100, i64 200, i64 300, i64 400>, <4 x i64>* %mv, align 16
  %ptrs0 = insertelement <2 x i64*> undef, i64* %m0, i32 0
  %ptrs = shufflevector <2 x i64*> %ptrs0, <2 x i64*> undef, <2 x i32> zeroinitializer
  %lanes = getelementptr i64, <2 x i64*> %ptrs, <2 x i64> <i64 1, i64 3>
  %p1 = extractelement <2 x i64*> %lanes, i32 1
  %v3 = load i64, i64* %p1
  call void @print_i64(i64 %v3)
  %back = load <4 x i64>, <4 x i64>* %mv, align 16
  %c = icmp sgt i64 %v3, 350
  br i1 %c, label %yes, label %no
yes:
  br label %join
no:
  br label %join
join:
  %phi = phi <4 x i64> [ %back, %yes ], [ zeroinitializer, %no ]
  %sel = select i1 %c, <4 x i64> zeroinitializer, <4 x i64> %phi
  %j1 = extractelement <4 x i64> %phi, i32 1
  %j2 = extractelement <4 x i64> %sel, i32 1
  call void @print_i64(i64 %j1)
  call void @print_i64(i64 %j2)
  ret i64 %s0
}
"""

# i128 in register pairs, in memory and seen as two words; first-class structs built, passed, returned
# in registers (rax/rdx, xmm0) and through a hidden result pointer.
WIDE_SCALARS = PRINT_DECL + """
%pair = type { i64, double }
%five = type { i64, i64, i64, i64, i64 }

define i128 @pass(i64 %a, i128 %x, i64 %b) {
  ret i128 %x
}

define %pair @mk(i64 %a, double %b) {
  %p = insertvalue %pair undef, i64 %a, 0
  %q = insertvalue %pair %p, double %b, 1
  ret %pair %q
}

define i64 @first(%pair %p, i64 %k) {
  %a = extractvalue %pair %p, 0
  %s = add i64 %a, %k
  ret i64 %s
}

define %five @fives(i64 %x) {
  %a = insertvalue %five zeroinitializer, i64 %x, 4
  %b = insertvalue %five %a, i64 11, 0
  ret %five %b
}

define i64 @main() {
  %slot = alloca i128, align 16
  store i128 18446744073709551621, i128* %slot
  %x = load i128, i128* %slot
  %y = call i128 @pass(i64 1, i128 %x, i64 2)
  store i128 %y, i128* %slot
  %words = bitcast i128* %slot to <2 x i64>*
  %w = load <2 x i64>, <2 x i64>* %words
  %lo = extractelement <2 x i64> %w, i32 0
  %hi = extractelement <2 x i64> %w, i32 1
  call void @print_i64(i64 %lo)
  call void @print_i64(i64 %hi)
  %p = call %pair @mk(i64 7, double 2.5)
  %d = extractvalue %pair %p, 1
  %bits = bitcast double %d to i64
  call void @print_i64(i64 %bits)
  %f = call i64 @first(%pair %p, i64 30)
  call void @print_i64(i64 %f)
  %v = call %five @fives(i64 77)
  %v0 = extractvalue %five %v, 0
  %v4 = extractvalue %five %v, 4
  call void @print_i64(i64 %v0)
  call void @print_i64(i64 %v4)
  ret i64 0
}
"""

# SSE arithmetic and conversions; every fcmp predicate on ordered, equal and NaN operands (a bit each).
FLOAT_OPS = PRINT_DECL + """
define i64 @preds(double %a, double %b) {
  %c0 = fcmp oeq double %a, %b
  %c1 = fcmp ogt double %a, %b
  %c2 = fcmp oge double %a, %b
  %c3 = fcmp olt double %a, %b
  %c4 = fcmp ole double %a, %b
  %c5 = fcmp one double %a, %b
  %c6 = fcmp ord double %a, %b
  %c7 = fcmp ueq double %a, %b
  %c8 = fcmp ugt double %a, %b
  %c9 = fcmp uge double %a, %b
  %c10 = fcmp ult double %a, %b
  %c11 = fcmp ule double %a, %b
  %c12 = fcmp une double %a, %b
  %c13 = fcmp uno double %a, %b
  %c14 = fcmp true double %a, %b
  %c15 = fcmp false double %a, %b
  %z0 = zext i1 %c0 to i64
  %z1 = zext i1 %c1 to i64
  %z2 = zext i1 %c2 to i64
  %z3 = zext i1 %c3 to i64
  %z4 = zext i1 %c4 to i64
  %z5 = zext i1 %c5 to i64
  %z6 = zext i1 %c6 to i64
  %z7 = zext i1 %c7 to i64
  %z8 = zext i1 %c8 to i64
  %z9 = zext i1 %c9 to i64
  %z10 = zext i1 %c10 to i64
  %z11 = zext i1 %c11 to i64
  %z12 = zext i1 %c12 to i64
  %z13 = zext i1 %c13 to i64
  %z14 = zext i1 %c14 to i64
  %z15 = zext i1 %c15 to i64
  %s1 = shl i64 %z1, 1
  %s2 = shl i64 %z2, 2
  %s3 = shl i64 %z3, 3
  %s4 = shl i64 %z4, 4
  %s5 = shl i64 %z5, 5
  %s6 = shl i64 %z6, 6
  %s7 = shl i64 %z7, 7
  %s8 = shl i64 %z8, 8
  %s9 = shl i64 %z9, 9
  %s10 = shl i64 %z10, 10
  %s11 = shl i64 %z11, 11
  %s12 = shl i64 %z12, 12
  %s13 = shl i64 %z13, 13
  %s14 = shl i64 %z14, 14
  %s15 = shl i64 %z15, 15
  %o1 = or i64 %z0, %s1
  %o2 = or i64 %o1, %s2
  %o3 = or i64 %o2, %s3
  %o4 = or i64 %o3, %s4
  %o5 = or i64 %o4, %s5
  %o6 = or i64 %o5, %s6
  %o7 = or i64 %o6, %s7
  %o8 = or i64 %o7, %s8
  %o9 = or i64 %o8, %s9
  %o10 = or i64 %o9, %s10
  %o11 = or i64 %o10, %s11
  %o12 = or i64 %o11, %s12
  %o13 = or i64 %o12, %s13
  %o14 = or i64 %o13, %s14
  %o15 = or i64 %o14, %s15
  ret i64 %o15
}

define i64 @fpreds(float %a, float %b) {
  %c1 = fcmp olt float %a, %b
  %c2 = fcmp uge float %a, %b
  %z1 = zext i1 %c1 to i64
  %z2 = zext i1 %c2 to i64
  %s2 = shl i64 %z2, 1
  %o = or i64 %z1, %s2
  ret i64 %o
}

define i64 @main() {
  %p1 = call i64 @preds(double 1.0, double 2.0)
  call void @print_i64(i64 %p1)
  %p2 = call i64 @preds(double 2.0, double 2.0)
  call void @print_i64(i64 %p2)
  %p3 = call i64 @preds(double 0x7FF8000000000000, double 1.0)
  call void @print_i64(i64 %p3)
  %p4 = call i64 @preds(double 3.0, double -1.0)
  call void @print_i64(i64 %p4)
  %p5 = call i64 @fpreds(float 1.0, float 0x7FF8000000000000)
  call void @print_i64(i64 %p5)
  %d = sitofp i32 -7 to double
  %e = fmul double %d, 1.5
  %f = fadd double %e, 0.25
  %g = fsub double %f, 10.0
  %h = fdiv double %g, 2.0
  %i = fneg double %h
  %ib = bitcast double %i to i64
  call void @print_i64(i64 %ib)
  %k = fptosi double %h to i32
  %kk = sext i32 %k to i64
  call void @print_i64(i64 %kk)
  %u = uitofp i64 -1 to double
  %ub = bitcast double %u to i64
  call void @print_i64(i64 %ub)
  %u2 = uitofp i64 12345 to float
  %u2b = bitcast float %u2 to i32
  %u2w = zext i32 %u2b to i64
  call void @print_i64(i64 %u2w)
  %s = sitofp i64 -3 to float
  %x = fpext float %s to double
  %xb = bitcast double %x to i64
  call void @print_i64(i64 %xb)
  %t = fptrunc double 0x400921FB54442D18 to float
  %tb = bitcast float %t to i32
  %tw = zext i32 %tb to i64
  call void @print_i64(i64 %tw)
  %fa = fadd float %t, 1.0
  %fm = fmul float %fa, %fa
  %fn = fneg float %fm
  %fb = bitcast float %fn to i32
  %fw = zext i32 %fb to i64
  call void @print_i64(i64 %fw)
  %q = fptoui double 3.75 to i8
  %qw = zext i8 %q to i64
  call void @print_i64(i64 %qw)
  ret i64 0
}
"""

# Allocas asking for more than 16-byte alignment: the prologue realigns rsp; calls with stack arguments still work.
REALIGNED = PRINT_DECL + """
define i64 @many(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g, i64* %p) {
  %v = load i64, i64* %p
  %s = add i64 %g, %v
  ret i64 %s
}

define i64 @main() {
  %small = alloca i8
  %big = alloca [3 x i64], align 128
  %mid = alloca i64, align 64
  %addr = ptrtoint [3 x i64]* %big to i64
  %low = and i64 %addr, 127
  call void @print_i64(i64 %low)
  %maddr = ptrtoint i64* %mid to i64
  %mlow = and i64 %maddr, 63
  call void @print_i64(i64 %mlow)
  store i8 7, i8* %small
  %e = getelementptr [3 x i64], [3 x i64]* %big, i64 0, i64 2
  store i64 35, i64* %e
  %r = call i64 @many(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64* %e)
  call void @print_i64(i64 %r)
  ret i64 %r
}
"""

PROGRAMS = {"vectors": VECTORS, "wide-scalars": WIDE_SCALARS, "float-ops": FLOAT_OPS, "realigned": REALIGNED}
