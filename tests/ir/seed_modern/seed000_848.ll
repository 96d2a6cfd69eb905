; seed 000 line 848: PlaceSafepoints output (the poll body inlined at entry), with declarations added.
declare void @foo()
declare void @do_safepoint()

define void @test() gc "statepoint-example" {
entry:
  call void @do_safepoint()
  call void @foo()
  ret void
}
