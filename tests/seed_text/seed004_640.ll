; seed: 004-Statepoints-middle.rst
; line: 640
; section: PlaceSafepoints
define void @test() gc "statepoint-example" {
  call void @foo()
  ret void
}

declare void @do_safepoint()
define void @gc.safepoint_poll() {
  call void @do_safepoint()
  ret void
}
