; Inline string attributes on call sites that RewriteStatepointsForGC reads:
; "statepoint-id", "statepoint-num-patch-bytes" and "deopt-lowering".
declare void @callee()
declare i32 @callee_i32(i32)

define i32 @annotated(i32 %x, i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call void @callee() "statepoint-id"="7"
  call void @callee() "statepoint-num-patch-bytes"="5"
  call void @callee() "statepoint-id"="8" "statepoint-num-patch-bytes"="16"
  %r = call i32 @callee_i32(i32 %x) "deopt-lowering"="live-in" [ "deopt"(i32 %x) ]
  call void @callee() nounwind "statepoint-id"="9" "deopt-lowering"="live-through"
  ret i32 %r
}
