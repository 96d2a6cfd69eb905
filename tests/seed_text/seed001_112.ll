; seed: 001-Statepoints-oldest.rst
; line: 112
; section: Overview
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj)
gc "statepoint-example" {
call void ()* @foo()
ret i8 addrspace(1)* %obj
}
