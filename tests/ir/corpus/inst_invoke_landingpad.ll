; Exceptions: invoke with normal and unwind labels, landingpad with cleanup, catch and filter
; clauses, resume, and a personality function.
declare i32 @__gxx_personality_v0(...)
declare i32 @may_throw(i32)
declare void @cleanup_work()

@typeinfo = external constant i8*

define i32 @guarded(i32 %x) personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = invoke i32 @may_throw(i32 %x)
          to label %ok unwind label %bad

ok:
  ret i32 %r

bad:
  %lp = landingpad { i8*, i32 }
          cleanup
  call void @cleanup_work()
  resume { i8*, i32 } %lp
}

define i32 @catching(i32 %x) personality i32 (...)* @__gxx_personality_v0 {
entry:
  %a = invoke i32 @may_throw(i32 %x)
          to label %next unwind label %handler

next:
  %b = invoke i32 @may_throw(i32 %a) to label %done unwind label %handler

done:
  ret i32 %b

handler:
  %lp = landingpad { i8*, i32 }
          catch i8* null
          catch i8* bitcast (i8** @typeinfo to i8*)
  %sel = extractvalue { i8*, i32 } %lp, 1
  ret i32 %sel
}

define void @filtering() personality i32 (...)* @__gxx_personality_v0 {
entry:
  invoke void @cleanup_work()
          to label %done unwind label %lpad

done:
  ret void

lpad:
  %lp = landingpad { i8*, i32 }
          cleanup
          filter [1 x i8*] [i8* bitcast (i8** @typeinfo to i8*)]
  resume { i8*, i32 } %lp
}
