; seed: 001-Statepoints-oldest.rst
; line: 413
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
