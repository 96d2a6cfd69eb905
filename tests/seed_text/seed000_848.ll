; seed: 000-Statepoints-modern.rst
; line: 848
; section: PlaceSafepoints
define void @test() gc "statepoint-example" {
  call void @do_safepoint()
  call void @foo()
  ret void
}
