; Metadata attached to instructions (!prof branch weights, !range, !nonnull, a custom kind !gctoy.note)
; and named metadata (!llvm.module.flags and a custom named node).
@limit = global i32 10

define i32 @bounded(i8 addrspace(1)** %slot, i1 %c) {
entry:
  %v = load i32, i32* @limit, align 4, !range !1
  %p = load i8 addrspace(1)*, i8 addrspace(1)** %slot, align 8, !nonnull !2
  br i1 %c, label %likely, label %unlikely, !prof !0

likely:
  ret i32 %v

unlikely:
  %w = add i32 %v, 1, !gctoy.note !3
  ret i32 %w
}

define i32 @switch_weights(i32 %x) {
entry:
  switch i32 %x, label %d [
    i32 1, label %a
  ], !prof !4

a:
  ret i32 1

d:
  ret i32 0
}

!llvm.module.flags = !{!5}
!gctoy.corpus = !{!3, !6}

!0 = !{!"branch_weights", i32 90, i32 10}
!1 = !{i32 0, i32 100}
!2 = !{}
!3 = !{!"a distinct remark"}
!4 = !{!"branch_weights", i32 1, i32 3}
!5 = !{i32 2, !"Debug Info Version", i32 3}
!6 = distinct !{i64 42, !3, null}
