; Input for PlaceSafepoints: a gc.safepoint_poll definition with a conditional slow path, a loop
; with a back edge, and calls in functions with and without a gc strategy.
@safepoint_requested = global i1 false

declare void @do_safepoint()
declare void @foo()

define void @gc.safepoint_poll() {
entry:
  %req = load volatile i1, i1* @safepoint_requested
  br i1 %req, label %slow, label %fast, !prof !0

slow:
  call void @do_safepoint()
  br label %fast

fast:
  ret void
}

define void @test() gc "statepoint-example" {
entry:
  call void @foo()
  ret void
}

define i64 @counting(i64 %n) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret i64 %i.next
}

define void @not_collected() {
entry:
  call void @foo()
  ret void
}

!0 = !{!"branch_weights", i32 1, i32 10000}
