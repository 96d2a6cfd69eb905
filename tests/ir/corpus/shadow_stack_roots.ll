; The shadow-stack GC in IR: gc "shadow-stack" functions declaring roots with llvm.gcroot on
; allocas, with and without metadata, and gc-aware reads and writes through them.
%Meta = type { i32, i32 }

@type_meta = constant %Meta { i32 1, i32 16 }

declare void @llvm.gcroot(i8**, i8*)
declare i8* @gc_alloc(i64)

define i8* @two_roots(i64 %n) gc "shadow-stack" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* bitcast (%Meta* @type_meta to i8*))
  store i8* null, i8** %a
  store i8* null, i8** %b
  %x = call i8* @gc_alloc(i64 %n)
  store i8* %x, i8** %a
  %y = call i8* @gc_alloc(i64 %n)
  store i8* %y, i8** %b
  %x.reload = load i8*, i8** %a
  ret i8* %x.reload
}

define void @no_roots() gc "shadow-stack" {
entry:
  ret void
}
