; select on integers and pointers, and phi nodes with two, three and four predecessors.
define i32 @max(i32 %a, i32 %b) {
entry:
  %c = icmp sgt i32 %a, %b
  %m = select i1 %c, i32 %a, i32 %b
  ret i32 %m
}

define i8 addrspace(1)* @pick(i1 %c, i8 addrspace(1)* %x, i8 addrspace(1)* %y) {
entry:
  %p = select i1 %c, i8 addrspace(1)* %x, i8 addrspace(1)* %y
  ret i8 addrspace(1)* %p
}

define i32 @diamond(i1 %c, i32 %x) {
entry:
  br i1 %c, label %left, label %right

left:
  %l = add i32 %x, 1
  br label %join

right:
  %r = sub i32 %x, 1
  br label %join

join:
  %v = phi i32 [ %l, %left ], [ %r, %right ]
  ret i32 %v
}

define i64 @four_way(i32 %sel, i64 %a) {
entry:
  switch i32 %sel, label %d [
    i32 0, label %b0
    i32 1, label %b1
    i32 2, label %b2
  ]

b0:
  br label %join

b1:
  %a1 = mul i64 %a, 2
  br label %join

b2:
  %a2 = mul i64 %a, 3
  br label %join

d:
  br label %join

join:
  %v = phi i64 [ %a, %b0 ], [ %a1, %b1 ], [ %a2, %b2 ], [ 0, %d ]
  %w = phi i1 [ true, %b0 ], [ false, %b1 ], [ false, %b2 ], [ true, %d ]
  %r = select i1 %w, i64 %v, i64 -1
  ret i64 %r
}

define i8 addrspace(1)* @pointer_phi(i1 %c, i8 addrspace(1)* %obj) {
entry:
  br i1 %c, label %shift, label %done

shift:
  %d = getelementptr i8, i8 addrspace(1)* %obj, i64 16
  br label %done

done:
  %p = phi i8 addrspace(1)* [ %obj, %entry ], [ %d, %shift ]
  ret i8 addrspace(1)* %p
}
