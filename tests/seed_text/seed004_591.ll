; seed: 004-Statepoints-middle.rst
; line: 591
; section: RewriteStatepointsForGC
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) 
       gc "statepoint-example" {
  call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0)
  ret i8 addrspace(1)* %obj
}
