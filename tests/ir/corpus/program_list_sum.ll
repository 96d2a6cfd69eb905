; A small complete program in explicit statepoint form: walk a heap-allocated linked list,
; allocate at a safepoint inside the loop, and keep every live gc pointer relocated.
target datalayout = "e-m:e-i64:64-f80:128-n8:16:32:64-S128-ni:1"
target triple = "x86_64-pc-linux-gnu"

%Cell = type { i64, %Cell addrspace(1)* }

declare %Cell addrspace(1)* @alloc_cell(i64)
declare token @llvm.experimental.gc.statepoint.p0f_p1s_Cellsi64f(i64 immarg, i32 immarg, %Cell addrspace(1)* (i64)*, i32 immarg, i32 immarg, ...)
declare %Cell addrspace(1)* @llvm.experimental.gc.result.p1s_Cells(token) #0
declare %Cell addrspace(1)* @llvm.experimental.gc.relocate.p1s_Cells(token, i32 immarg, i32 immarg) #0

; sum the list and prepend a fresh cell holding the sum
define %Cell addrspace(1)* @sum_and_push(%Cell addrspace(1)* %head) gc "statepoint-example" {
entry:
  %empty = icmp eq %Cell addrspace(1)* %head, null
  br i1 %empty, label %done, label %loop

loop:
  %cur = phi %Cell addrspace(1)* [ %head, %entry ], [ %next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %loop ]
  %vp = getelementptr inbounds %Cell, %Cell addrspace(1)* %cur, i64 0, i32 0
  %v = load i64, i64 addrspace(1)* %vp, align 8
  %acc.next = add i64 %acc, %v
  %np = getelementptr inbounds %Cell, %Cell addrspace(1)* %cur, i64 0, i32 1
  %next = load %Cell addrspace(1)*, %Cell addrspace(1)* addrspace(1)* %np, align 8
  %end = icmp eq %Cell addrspace(1)* %next, null
  br i1 %end, label %done, label %loop

done:
  %sum = phi i64 [ 0, %entry ], [ %acc.next, %loop ]
  ; allocation is a safepoint: %head is live across it
  %tok = call token (i64, i32, %Cell addrspace(1)* (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1s_Cellsi64f(i64 2882400000, i32 0, %Cell addrspace(1)* (i64)* @alloc_cell, i32 1, i32 0, i64 16, i32 0, i32 0) [ "gc-live"(%Cell addrspace(1)* %head) ]
  %fresh = call %Cell addrspace(1)* @llvm.experimental.gc.result.p1s_Cells(token %tok)
  %head.r = call coldcc %Cell addrspace(1)* @llvm.experimental.gc.relocate.p1s_Cells(token %tok, i32 0, i32 0)
  %fv = getelementptr inbounds %Cell, %Cell addrspace(1)* %fresh, i64 0, i32 0
  store i64 %sum, i64 addrspace(1)* %fv, align 8
  %fn = getelementptr inbounds %Cell, %Cell addrspace(1)* %fresh, i64 0, i32 1
  store %Cell addrspace(1)* %head.r, %Cell addrspace(1)* addrspace(1)* %fn, align 8
  ret %Cell addrspace(1)* %fresh
}

attributes #0 = { nounwind readnone }
