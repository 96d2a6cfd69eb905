; seed: 000-Statepoints-modern.rst
; line: 270
; section: Simplifications for Non-Relocating GCs
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) 
       gc "statepoint-example" {
  call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  ret i8 addrspace(1)* %obj
}
