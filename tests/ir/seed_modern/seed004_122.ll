; seed 004 line 122: the call before any safepoint is inserted, with the call written as LLVM 14 expects.
declare void @foo()

define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call void @foo()
  ret i8 addrspace(1)* %obj
}
