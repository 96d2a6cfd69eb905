; seed 004 line 640: PlaceSafepoints input, with the missing declaration of @foo added.
declare void @foo()

define void @test() gc "statepoint-example" {
entry:
  call void @foo()
  ret void
}

declare void @do_safepoint()

define void @gc.safepoint_poll() {
entry:
  call void @do_safepoint()
  ret void
}
