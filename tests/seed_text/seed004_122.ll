; seed: 004-Statepoints-middle.rst
; line: 122
; section: Overview
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) 
       gc "statepoint-example" {
  call void ()* @foo()
  ret i8 addrspace(1)* %obj
}
