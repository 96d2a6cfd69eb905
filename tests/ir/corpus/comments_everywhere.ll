; Comments in every position: whole lines, after entities, inside bodies, between blocks.
; Semicolons inside strings are not comments:
@text = constant [6 x i8] c"a;b;c\00" ; the string above contains ';'

; a comment between globals
%Pair = type { i32, i32 } ; a trailing comment after a type

declare void @sink(i32) ; after a declaration

define i32 @commented(i32 %x) { ; after the opening brace
; at the start of the body, before any label
entry: ; after a label
  %y = add i32 %x, 1 ; after an instruction
  ; an indented comment line
  br label %next ; after a terminator

; between blocks
next:
  call void @sink(i32 %y) ;no space after the semicolon
  ret i32 %y
} ; after the closing brace
;; double semicolon
;
; the file ends with a comment
