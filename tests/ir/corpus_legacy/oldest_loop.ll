; Oldest statepoint form in a loop: a poll statepoint per iteration, relocated base and derived
; pointers carried around the back edge by phis, deopt state naming the loop counter.
declare void @do_safepoint()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i8 addrspace(1)* @scan(i8 addrspace(1)* %base, i64 %n) gc "statepoint-example" {
entry:
  %first = getelementptr i8, i8 addrspace(1)* %base, i64 16
  br label %loop

loop:
  %b = phi i8 addrspace(1)* [ %base, %entry ], [ %b.relocated, %loop ]
  %cur = phi i8 addrspace(1)* [ %first, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  ; 0 @do_safepoint, 1 #call args, 2 flags, 3 #deopt = 1, 4 %i, 5 %b, 6 %cur
  %tok = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @do_safepoint, i32 0, i32 0, i32 1, i64 %i, i8 addrspace(1)* %b, i8 addrspace(1)* %cur)
  %b.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 5, i32 5)
  %cur.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 5, i32 6)
  %next = getelementptr i8, i8 addrspace(1)* %cur.relocated, i64 8
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret i8 addrspace(1)* %b.relocated
}
