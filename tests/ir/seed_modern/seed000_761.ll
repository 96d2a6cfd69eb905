; seed 000 line 761: RewriteStatepointsForGC input, with the missing declaration of @foo added.
declare void @foo()

define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call void @foo()
  ret i8 addrspace(1)* %obj
}
