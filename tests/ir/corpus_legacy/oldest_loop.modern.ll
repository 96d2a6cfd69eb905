; Modern (LLVM 14) equivalent of oldest_loop.ll: positions 5 and 6 become gc-live entries 0 and 1,
; the loop counter moves to a "deopt" bundle.
declare void @do_safepoint()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @scan(i8 addrspace(1)* %base, i64 %n) gc "statepoint-example" {
entry:
  %first = getelementptr i8, i8 addrspace(1)* %base, i64 16
  br label %loop

loop:
  %b = phi i8 addrspace(1)* [ %base, %entry ], [ %b.relocated, %loop ]
  %cur = phi i8 addrspace(1)* [ %first, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @do_safepoint, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i64 %i), "gc-live"(i8 addrspace(1)* %b, i8 addrspace(1)* %cur) ]
  %b.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %cur.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %next = getelementptr i8, i8 addrspace(1)* %cur.relocated, i64 8
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret i8 addrspace(1)* %b.relocated
}

attributes #0 = { nounwind readnone }
