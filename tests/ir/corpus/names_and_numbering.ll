; Value naming: numbered values and blocks (%0, %1, implicit entry block number), quoted names
; with spaces and punctuation, dotted and dashed names, and quoted global names.
@"global with spaces" = global i32 1
@"\01mangled" = global i32 2
@g.dotted-name_1 = global i32 3

define i32 @numbered(i32 %0, i32 %1) {
  %3 = add i32 %0, %1
  br label %4

4:
  %5 = mul i32 %3, 2
  %"odd name" = add i32 %5, 1
  %a.b-c_d$e = sub i32 %"odd name", 1
  ret i32 %a.b-c_d$e
}

define i32 @unnamed_entry(i32 %x) {
  %1 = add i32 %x, 1
  %2 = icmp sgt i32 %1, 0
  br i1 %2, label %3, label %5

3:
  %4 = load i32, i32* @"global with spaces"
  br label %5

5:
  %6 = phi i32 [ %4, %3 ], [ 0, %0 ]
  ret i32 %6
}

define i32 @"quoted function"() {
"quoted block":
  %v = load i32, i32* @"\01mangled"
  ret i32 %v
}

define i32 @calls_quoted() {
entry:
  %r = call i32 @"quoted function"()
  %s = load i32, i32* @g.dotted-name_1
  %t = add i32 %r, %s
  ret i32 %t
}
