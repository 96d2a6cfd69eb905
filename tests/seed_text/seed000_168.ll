; seed: 000-Statepoints-modern.rst
; line: 168
; section: Explicit Representation
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) 
       gc "statepoint-example" {
  call void ()* @foo()
  ret i8 addrspace(1)* %obj
}
