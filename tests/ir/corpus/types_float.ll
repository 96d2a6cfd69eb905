; A little floating point: float and double values, constants, arithmetic, compares and conversions.
@half = global float 5.000000e-01
@pi = constant double 3.141592653589793
@hexbits = global double 0x7FF0000000000000 ; +infinity

define double @area(double %r) {
entry:
  %pi = load double, double* @pi
  %r2 = fmul double %r, %r
  %a = fmul double %pi, %r2
  ret double %a
}

define float @halve(float %x) {
entry:
  %h = load float, float* @half
  %y = fmul float %x, %h
  ret float %y
}

define i32 @to_int(double %d) {
entry:
  %i = fptosi double %d to i32
  ret i32 %i
}

define double @from_int(i64 %i) {
entry:
  %d = sitofp i64 %i to double
  %e = fadd double %d, 1.000000e+00
  ret double %e
}

define i1 @less(float %a, float %b) {
entry:
  %c = fcmp olt float %a, %b
  ret i1 %c
}

define double @widen(float %f) {
entry:
  %d = fpext float %f to double
  ret double %d
}
