; Operand bundles on ordinary calls: "deopt" (several, empty, mixed types) and a custom bundle tag;
; this is the shape RewriteStatepointsForGC consumes.
declare void @callee()
declare i64 @compute(i64)

define i64 @with_deopt(i64 %x, i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call void @callee() [ "deopt"(i32 1, i64 %x) ]
  call void @callee() [ "deopt"() ]
  %r = call i64 @compute(i64 %x) [ "deopt"(i32 2, i8 addrspace(1)* %obj, i1 true, double 5.000000e-01) ]
  call void @callee() [ "deopt"(i64 %r), "gctoy-note"(i32 3) ]
  ret i64 %r
}
