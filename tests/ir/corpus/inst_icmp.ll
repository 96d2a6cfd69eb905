; icmp with all ten predicates on integers and pointers, results combined with i1 logic.
define i32 @all_predicates(i32 %a, i32 %b) {
entry:
  %eq = icmp eq i32 %a, %b
  %ne = icmp ne i32 %a, %b
  %ugt = icmp ugt i32 %a, %b
  %uge = icmp uge i32 %a, %b
  %ult = icmp ult i32 %a, %b
  %ule = icmp ule i32 %a, %b
  %sgt = icmp sgt i32 %a, %b
  %sge = icmp sge i32 %a, %b
  %slt = icmp slt i32 %a, %b
  %sle = icmp sle i32 %a, %b
  %z0 = zext i1 %eq to i32
  %z1 = zext i1 %ne to i32
  %z2 = zext i1 %ugt to i32
  %z3 = zext i1 %uge to i32
  %z4 = zext i1 %ult to i32
  %z5 = zext i1 %ule to i32
  %z6 = zext i1 %sgt to i32
  %z7 = zext i1 %sge to i32
  %z8 = zext i1 %slt to i32
  %z9 = zext i1 %sle to i32
  %s1 = add i32 %z0, %z1
  %s2 = add i32 %s1, %z2
  %s3 = add i32 %s2, %z3
  %s4 = add i32 %s3, %z4
  %s5 = add i32 %s4, %z5
  %s6 = add i32 %s5, %z6
  %s7 = add i32 %s6, %z7
  %s8 = add i32 %s7, %z8
  %s9 = add i32 %s8, %z9
  ret i32 %s9
}

define i1 @is_null(i8 addrspace(1)* %p) {
entry:
  %c = icmp eq i8 addrspace(1)* %p, null
  ret i1 %c
}

define i1 @same_object(i8 addrspace(1)* %a, i8 addrspace(1)* %b) {
entry:
  %c = icmp ne i8 addrspace(1)* %a, %b
  %n = xor i1 %c, true
  ret i1 %n
}

define i1 @wide_compare(i128 %a, i8 %b) {
entry:
  %w = sext i8 %b to i128
  %c = icmp sle i128 %a, %w
  ret i1 %c
}
