"""The C library functions LLVM's TargetLibraryInfo recognises, which LLVM treats as GC leaves.

RewriteStatepointsForGC does not wrap a call of one of these in a statepoint, and
PlaceSafepoints does not count it as a safepoint (so a loop whose only call is ``ldexp`` still
gets a backedge poll), provided the callee is declared with the prototype LLVM expects and
the call is not ``nobuiltin``.

Source: the function names of ``llvm/include/llvm/Analysis/TargetLibraryInfo.def`` that
LLVM 19 reports available for the ``x86_64-unknown-linux-gnu`` triple (its
``llvm-tli-checker --dump-tli``); LLVM 14 knows all of them but :data:`ADDED_AFTER_LLVM_14`.
Names in :data:`LINUX_ONLY` are available only when the module's ``target triple`` names Linux
(LLVM does not treat them as library functions in a module without a triple; other operating
systems and Linux environments other than GNU, which LLVM treats somewhat differently, are
treated here like no triple and like GNU respectively). Prototypes are
written as IR function types (``ptr`` stands for a pointer of any type or address space), and
were checked by running ``opt -passes=rewrite-statepoints-for-gc`` of LLVM 14 and 19 on a call
of every name.
"""
from __future__ import annotations

#: every name, sorted
LIBRARY_FUNCTIONS: tuple[str, ...] = (
    '_IO_getc', '_IO_putc', '_ZdaPv', '_ZdaPvRKSt9nothrow_t', '_ZdaPvSt11align_val_t',
    '_ZdaPvSt11align_val_tRKSt9nothrow_t', '_ZdaPvj', '_ZdaPvjSt11align_val_t', '_ZdaPvm',
    '_ZdaPvmSt11align_val_t', '_ZdlPv', '_ZdlPvRKSt9nothrow_t', '_ZdlPvSt11align_val_t',
    '_ZdlPvSt11align_val_tRKSt9nothrow_t', '_ZdlPvj', '_ZdlPvjSt11align_val_t', '_ZdlPvm',
    '_ZdlPvmSt11align_val_t', '_Znaj', '_ZnajRKSt9nothrow_t', '_ZnajSt11align_val_t',
    '_ZnajSt11align_val_tRKSt9nothrow_t', '_Znam', '_Znam12__hot_cold_t', '_ZnamRKSt9nothrow_t',
    '_ZnamRKSt9nothrow_t12__hot_cold_t', '_ZnamSt11align_val_t',
    '_ZnamSt11align_val_t12__hot_cold_t', '_ZnamSt11align_val_tRKSt9nothrow_t',
    '_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t', '_Znwj', '_ZnwjRKSt9nothrow_t',
    '_ZnwjSt11align_val_t', '_ZnwjSt11align_val_tRKSt9nothrow_t', '_Znwm', '_Znwm12__hot_cold_t',
    '_ZnwmRKSt9nothrow_t', '_ZnwmRKSt9nothrow_t12__hot_cold_t', '_ZnwmSt11align_val_t',
    '_ZnwmSt11align_val_t12__hot_cold_t', '_ZnwmSt11align_val_tRKSt9nothrow_t',
    '_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t', '__acos_finite', '__acosf_finite',
    '__acosh_finite', '__acoshf_finite', '__acoshl_finite', '__acosl_finite', '__asin_finite',
    '__asinf_finite', '__asinl_finite', '__atan2_finite', '__atan2f_finite', '__atan2l_finite',
    '__atanh_finite', '__atanhf_finite', '__atanhl_finite', '__atomic_load', '__atomic_store',
    '__cosh_finite', '__coshf_finite', '__coshl_finite', '__cxa_atexit', '__cxa_guard_abort',
    '__cxa_guard_acquire', '__cxa_guard_release', '__exp10_finite', '__exp10f_finite',
    '__exp10l_finite', '__exp2_finite', '__exp2f_finite', '__exp2l_finite', '__exp_finite',
    '__expf_finite', '__expl_finite', '__isoc99_scanf', '__isoc99_sscanf', '__kmpc_alloc_shared',
    '__kmpc_free_shared', '__log10_finite', '__log10f_finite', '__log10l_finite', '__log2_finite',
    '__log2f_finite', '__log2l_finite', '__log_finite', '__logf_finite', '__logl_finite',
    '__memccpy_chk', '__memcpy_chk', '__memmove_chk', '__mempcpy_chk', '__memset_chk',
    '__pow_finite', '__powf_finite', '__powl_finite', '__sinh_finite', '__sinhf_finite',
    '__sinhl_finite', '__snprintf_chk', '__sprintf_chk', '__sqrt_finite', '__sqrtf_finite',
    '__sqrtl_finite', '__stpcpy_chk', '__stpncpy_chk', '__strcat_chk', '__strcpy_chk', '__strdup',
    '__strlcat_chk', '__strlcpy_chk', '__strlen_chk', '__strncat_chk', '__strncpy_chk', '__strndup',
    '__strtok_r', '__vsnprintf_chk', '__vsprintf_chk', 'abs', 'access', 'acos', 'acosf', 'acosh',
    'acoshf', 'acoshl', 'acosl', 'aligned_alloc', 'asin', 'asinf', 'asinh', 'asinhf', 'asinhl',
    'asinl', 'atan', 'atan2', 'atan2f', 'atan2l', 'atanf', 'atanh', 'atanhf', 'atanhl', 'atanl',
    'atexit', 'atof', 'atoi', 'atol', 'atoll', 'bcmp', 'bcopy', 'bzero', 'cabs', 'cabsf', 'cabsl',
    'calloc', 'cbrt', 'cbrtf', 'cbrtl', 'ceil', 'ceilf', 'ceill', 'chmod', 'chown', 'clearerr',
    'closedir', 'copysign', 'copysignf', 'copysignl', 'cos', 'cosf', 'cosh', 'coshf', 'coshl',
    'cosl', 'ctermid', 'erf', 'erff', 'erfl', 'execl', 'execle', 'execlp', 'execv', 'execvP',
    'execve', 'execvp', 'execvpe', 'exp', 'exp2', 'exp2f', 'exp2l', 'expf', 'expl', 'expm1',
    'expm1f', 'expm1l', 'fabs', 'fabsf', 'fabsl', 'fclose', 'fdopen', 'feof', 'ferror', 'fflush',
    'ffs', 'ffsl', 'ffsll', 'fgetc', 'fgetc_unlocked', 'fgetpos', 'fgets', 'fgets_unlocked',
    'fileno', 'flockfile', 'floor', 'floorf', 'floorl', 'fmax', 'fmaxf', 'fmaxl', 'fmin', 'fminf',
    'fminl', 'fmod', 'fmodf', 'fmodl', 'fopen', 'fopen64', 'fork', 'fprintf', 'fputc',
    'fputc_unlocked', 'fputs', 'fputs_unlocked', 'fread', 'fread_unlocked', 'free', 'frexp',
    'frexpf', 'frexpl', 'fscanf', 'fseek', 'fseeko', 'fseeko64', 'fsetpos', 'fstat', 'fstat64',
    'fstatvfs', 'fstatvfs64', 'ftell', 'ftello', 'ftello64', 'ftrylockfile', 'funlockfile',
    'fwrite', 'fwrite_unlocked', 'getc', 'getc_unlocked', 'getchar', 'getchar_unlocked', 'getenv',
    'getitimer', 'getlogin_r', 'getpwnam', 'gets', 'gettimeofday', 'htonl', 'htons', 'isascii',
    'isdigit', 'labs', 'lchown', 'ldexp', 'ldexpf', 'ldexpl', 'llabs', 'log', 'log10', 'log10f',
    'log10l', 'log1p', 'log1pf', 'log1pl', 'log2', 'log2f', 'log2l', 'logb', 'logbf', 'logbl',
    'logf', 'logl', 'lstat', 'lstat64', 'malloc', 'memalign', 'memccpy', 'memchr', 'memcmp',
    'memcpy', 'memmove', 'mempcpy', 'memrchr', 'memset', 'mkdir', 'mktime', 'modf', 'modff',
    'modfl', 'nearbyint', 'nearbyintf', 'nearbyintl', 'ntohl', 'ntohs', 'open', 'open64', 'opendir',
    'pclose', 'perror', 'popen', 'posix_memalign', 'pow', 'powf', 'powl', 'pread', 'printf', 'putc',
    'putc_unlocked', 'putchar', 'putchar_unlocked', 'puts', 'pwrite', 'qsort', 'read', 'readlink',
    'realloc', 'reallocf', 'realpath', 'remainder', 'remainderf', 'remainderl', 'remove', 'remquo',
    'remquof', 'remquol', 'rename', 'rewind', 'rint', 'rintf', 'rintl', 'rmdir', 'round',
    'roundeven', 'roundevenf', 'roundevenl', 'roundf', 'roundl', 'scanf', 'setbuf', 'setitimer',
    'setvbuf', 'sin', 'sinf', 'sinh', 'sinhf', 'sinhl', 'sinl', 'snprintf', 'sprintf', 'sqrt',
    'sqrtf', 'sqrtl', 'sscanf', 'stat', 'stat64', 'statvfs', 'statvfs64', 'stpcpy', 'stpncpy',
    'strcasecmp', 'strcat', 'strchr', 'strcmp', 'strcoll', 'strcpy', 'strcspn', 'strdup', 'strlcat',
    'strlcpy', 'strlen', 'strncasecmp', 'strncat', 'strncmp', 'strncpy', 'strndup', 'strnlen',
    'strpbrk', 'strrchr', 'strspn', 'strstr', 'strtod', 'strtof', 'strtok', 'strtok_r', 'strtol',
    'strtold', 'strtoll', 'strtoul', 'strtoull', 'strxfrm', 'system', 'tan', 'tanf', 'tanh',
    'tanhf', 'tanhl', 'tanl', 'times', 'tmpfile', 'tmpfile64', 'toascii', 'trunc', 'truncf',
    'truncl', 'uname', 'ungetc', 'unlink', 'unsetenv', 'utime', 'utimes', 'valloc', 'vfprintf',
    'vfscanf', 'vprintf', 'vscanf', 'vsnprintf', 'vsprintf', 'vsscanf', 'wcslen', 'write',
)

#: names LLVM 14 does not know (LLVM 19 does)
ADDED_AFTER_LLVM_14: tuple[str, ...] = (
    '_Znam12__hot_cold_t', '_ZnamRKSt9nothrow_t12__hot_cold_t',
    '_ZnamSt11align_val_t12__hot_cold_t', '_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t',
    '_Znwm12__hot_cold_t', '_ZnwmRKSt9nothrow_t12__hot_cold_t',
    '_ZnwmSt11align_val_t12__hot_cold_t', '_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t',
    'atexit', 'erf', 'erff', 'erfl', 'remquo', 'remquof', 'remquol',
)

#: names that are library functions only for a Linux target triple
LINUX_ONLY: tuple[str, ...] = (
    '_IO_getc', '_IO_putc', '__acos_finite', '__acosf_finite', '__acosh_finite', '__acoshf_finite',
    '__acoshl_finite', '__acosl_finite', '__asin_finite', '__asinf_finite', '__asinl_finite',
    '__atan2_finite', '__atan2f_finite', '__atan2l_finite', '__atanh_finite', '__atanhf_finite',
    '__atanhl_finite', '__cosh_finite', '__coshf_finite', '__coshl_finite', '__exp10_finite',
    '__exp10f_finite', '__exp10l_finite', '__exp2_finite', '__exp2f_finite', '__exp2l_finite',
    '__exp_finite', '__expf_finite', '__expl_finite', '__isoc99_scanf', '__isoc99_sscanf',
    '__log10_finite', '__log10f_finite', '__log10l_finite', '__log2_finite', '__log2f_finite',
    '__log2l_finite', '__log_finite', '__logf_finite', '__logl_finite', '__pow_finite',
    '__powf_finite', '__powl_finite', '__sinh_finite', '__sinhf_finite', '__sinhl_finite',
    '__sqrt_finite', '__sqrtf_finite', '__sqrtl_finite', '__strdup', '__strtok_r', 'bcmp', 'ffsl',
    'ffsll', 'fgetc_unlocked', 'fgets_unlocked', 'fopen64', 'fputc_unlocked', 'fputs_unlocked',
    'fread_unlocked', 'fseeko64', 'fstat64', 'fstatvfs64', 'ftello64', 'fwrite_unlocked',
    'getc_unlocked', 'getchar_unlocked', 'lstat64', 'memalign', 'open64', 'putc_unlocked',
    'putchar_unlocked', 'stat64', 'statvfs64', 'tmpfile64',
)

#: the prototype each name must be declared with, as ``{IR function type: names}``
_PROTOTYPES: dict[str, tuple[str, ...]] = {
    'double (double)': (
        '__acos_finite', '__acosh_finite', '__asin_finite', '__atanh_finite', '__cosh_finite',
        '__exp10_finite', '__exp2_finite', '__exp_finite', '__log10_finite', '__log2_finite',
        '__log_finite', '__sinh_finite', '__sqrt_finite', 'acos', 'acosh', 'asin', 'asinh', 'atan',
        'atanh', 'cbrt', 'ceil', 'cos', 'cosh', 'erf', 'exp', 'exp2', 'expm1', 'fabs', 'floor',
        'log', 'log10', 'log1p', 'log2', 'logb', 'nearbyint', 'rint', 'round', 'roundeven', 'sin',
        'sinh', 'sqrt', 'tan', 'tanh', 'trunc',
    ),
    'double (double, double)': (
        '__atan2_finite', '__pow_finite', 'atan2', 'cabs', 'copysign', 'fmax', 'fmin', 'fmod',
        'pow', 'remainder',
    ),
    'double (double, double, ptr)': (
        'remquo',
    ),
    'double (double, i32)': (
        'ldexp',
    ),
    'double (double, ptr)': (
        'frexp', 'modf',
    ),
    'double (ptr)': (
        'atof',
    ),
    'double (ptr, ptr)': (
        'strtod',
    ),
    'float (float)': (
        '__acosf_finite', '__acoshf_finite', '__asinf_finite', '__atanhf_finite', '__coshf_finite',
        '__exp10f_finite', '__exp2f_finite', '__expf_finite', '__log10f_finite', '__log2f_finite',
        '__logf_finite', '__sinhf_finite', '__sqrtf_finite', 'acosf', 'acoshf', 'asinf', 'asinhf',
        'atanf', 'atanhf', 'cbrtf', 'ceilf', 'cosf', 'coshf', 'erff', 'exp2f', 'expf', 'expm1f',
        'fabsf', 'floorf', 'log10f', 'log1pf', 'log2f', 'logbf', 'logf', 'nearbyintf', 'rintf',
        'roundevenf', 'roundf', 'sinf', 'sinhf', 'sqrtf', 'tanf', 'tanhf', 'truncf',
    ),
    'float (float, float)': (
        '__atan2f_finite', '__powf_finite', 'atan2f', 'cabsf', 'copysignf', 'fmaxf', 'fminf',
        'fmodf', 'powf', 'remainderf',
    ),
    'float (float, float, ptr)': (
        'remquof',
    ),
    'float (float, i32)': (
        'ldexpf',
    ),
    'float (float, ptr)': (
        'frexpf', 'modff',
    ),
    'float (ptr, ptr)': (
        'strtof',
    ),
    'i16 (i16)': (
        'htons', 'ntohs',
    ),
    'i32 ()': (
        'fork', 'getchar', 'getchar_unlocked',
    ),
    'i32 (i32)': (
        'abs', 'ffs', 'htonl', 'isascii', 'isdigit', 'ntohl', 'putchar', 'putchar_unlocked',
        'toascii',
    ),
    'i32 (i32, ptr)': (
        '_IO_putc', 'fputc', 'fputc_unlocked', 'fstat', 'fstat64', 'fstatvfs', 'fstatvfs64',
        'getitimer', 'putc', 'putc_unlocked', 'ungetc',
    ),
    'i32 (i32, ptr, ptr)': (
        'setitimer',
    ),
    'i32 (i64)': (
        'ffsl', 'ffsll',
    ),
    'i32 (ptr)': (
        '_IO_getc', '__cxa_guard_acquire', 'atexit', 'atoi', 'closedir', 'fclose', 'feof', 'ferror',
        'fflush', 'fgetc', 'fgetc_unlocked', 'fileno', 'ftrylockfile', 'getc', 'getc_unlocked',
        'pclose', 'puts', 'remove', 'rmdir', 'system', 'uname', 'unlink', 'unsetenv',
    ),
    'i32 (ptr, ...)': (
        '__isoc99_scanf', 'printf', 'scanf',
    ),
    'i32 (ptr, i32)': (
        'access', 'chmod', 'mkdir',
    ),
    'i32 (ptr, i32, ...)': (
        'open', 'open64',
    ),
    'i32 (ptr, i32, i32)': (
        'chown', 'lchown',
    ),
    'i32 (ptr, i32, i64, ptr, ...)': (
        '__sprintf_chk',
    ),
    'i32 (ptr, i32, i64, ptr, ptr)': (
        '__vsprintf_chk',
    ),
    'i32 (ptr, i64)': (
        'getlogin_r',
    ),
    'i32 (ptr, i64, i32)': (
        'fseek', 'fseeko', 'fseeko64',
    ),
    'i32 (ptr, i64, i32, i64, ptr, ...)': (
        '__snprintf_chk',
    ),
    'i32 (ptr, i64, i32, i64, ptr, ptr)': (
        '__vsnprintf_chk',
    ),
    'i32 (ptr, i64, i64)': (
        'posix_memalign',
    ),
    'i32 (ptr, i64, ptr, ...)': (
        'snprintf',
    ),
    'i32 (ptr, i64, ptr, ptr)': (
        'vsnprintf',
    ),
    'i32 (ptr, ptr)': (
        'execv', 'execvp', 'fgetpos', 'fputs', 'fputs_unlocked', 'fsetpos', 'gettimeofday', 'lstat',
        'lstat64', 'rename', 'stat', 'stat64', 'statvfs', 'statvfs64', 'strcasecmp', 'strcmp',
        'strcoll', 'utime', 'utimes', 'vprintf', 'vscanf',
    ),
    'i32 (ptr, ptr, ...)': (
        '__isoc99_sscanf', 'execl', 'execle', 'execlp', 'fprintf', 'fscanf', 'sprintf', 'sscanf',
    ),
    'i32 (ptr, ptr, i32, i64)': (
        'setvbuf',
    ),
    'i32 (ptr, ptr, i64)': (
        'bcmp', 'memcmp', 'strncasecmp', 'strncmp',
    ),
    'i32 (ptr, ptr, ptr)': (
        '__cxa_atexit', 'execvP', 'execve', 'execvpe', 'vfprintf', 'vfscanf', 'vsprintf', 'vsscanf',
    ),
    'i64 (i32, ptr, i64)': (
        'read', 'write',
    ),
    'i64 (i32, ptr, i64, i64)': (
        'pread', 'pwrite',
    ),
    'i64 (i64)': (
        'labs', 'llabs',
    ),
    'i64 (ptr)': (
        'atol', 'atoll', 'ftell', 'ftello', 'ftello64', 'mktime', 'strlen', 'times', 'wcslen',
    ),
    'i64 (ptr, i64)': (
        '__strlen_chk', 'strnlen',
    ),
    'i64 (ptr, i64, i64, ptr)': (
        'fread', 'fread_unlocked', 'fwrite', 'fwrite_unlocked',
    ),
    'i64 (ptr, ptr)': (
        'strcspn', 'strspn',
    ),
    'i64 (ptr, ptr, i32)': (
        'strtol', 'strtoll', 'strtoul', 'strtoull',
    ),
    'i64 (ptr, ptr, i64)': (
        'readlink', 'strlcat', 'strlcpy', 'strxfrm',
    ),
    'i64 (ptr, ptr, i64, i64)': (
        '__strlcat_chk', '__strlcpy_chk',
    ),
    'ptr ()': (
        'tmpfile', 'tmpfile64',
    ),
    'ptr (i32)': (
        '_Znaj', '_Znwj',
    ),
    'ptr (i32, i32)': (
        '_ZnajSt11align_val_t', '_ZnwjSt11align_val_t',
    ),
    'ptr (i32, i32, ptr)': (
        '_ZnajSt11align_val_tRKSt9nothrow_t', '_ZnwjSt11align_val_tRKSt9nothrow_t',
    ),
    'ptr (i32, ptr)': (
        '_ZnajRKSt9nothrow_t', '_ZnwjRKSt9nothrow_t', 'fdopen',
    ),
    'ptr (i64)': (
        '_Znam', '_Znwm', '__kmpc_alloc_shared', 'malloc', 'valloc',
    ),
    'ptr (i64, i64)': (
        '_ZnamSt11align_val_t', '_ZnwmSt11align_val_t', 'aligned_alloc', 'calloc', 'memalign',
    ),
    'ptr (i64, i64, i8)': (
        '_ZnamSt11align_val_t12__hot_cold_t', '_ZnwmSt11align_val_t12__hot_cold_t',
    ),
    'ptr (i64, i64, ptr)': (
        '_ZnamSt11align_val_tRKSt9nothrow_t', '_ZnwmSt11align_val_tRKSt9nothrow_t',
    ),
    'ptr (i64, i64, ptr, i8)': (
        '_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t',
        '_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t',
    ),
    'ptr (i64, i8)': (
        '_Znam12__hot_cold_t', '_Znwm12__hot_cold_t',
    ),
    'ptr (i64, ptr)': (
        '_ZnamRKSt9nothrow_t', '_ZnwmRKSt9nothrow_t',
    ),
    'ptr (i64, ptr, i8)': (
        '_ZnamRKSt9nothrow_t12__hot_cold_t', '_ZnwmRKSt9nothrow_t12__hot_cold_t',
    ),
    'ptr (ptr)': (
        '__strdup', 'ctermid', 'getenv', 'getpwnam', 'gets', 'opendir', 'strdup',
    ),
    'ptr (ptr, i32)': (
        'strchr', 'strrchr',
    ),
    'ptr (ptr, i32, i64)': (
        'memchr', 'memrchr', 'memset',
    ),
    'ptr (ptr, i32, i64, i64)': (
        '__memset_chk',
    ),
    'ptr (ptr, i32, ptr)': (
        'fgets', 'fgets_unlocked',
    ),
    'ptr (ptr, i64)': (
        '__strndup', 'realloc', 'reallocf', 'strndup',
    ),
    'ptr (ptr, ptr)': (
        'fopen', 'fopen64', 'popen', 'realpath', 'stpcpy', 'strcat', 'strcpy', 'strpbrk', 'strstr',
        'strtok',
    ),
    'ptr (ptr, ptr, i32, i64)': (
        'memccpy',
    ),
    'ptr (ptr, ptr, i32, i64, i64)': (
        '__memccpy_chk',
    ),
    'ptr (ptr, ptr, i64)': (
        '__stpcpy_chk', '__strcat_chk', '__strcpy_chk', 'memcpy', 'memmove', 'mempcpy', 'stpncpy',
        'strncat', 'strncpy',
    ),
    'ptr (ptr, ptr, i64, i64)': (
        '__memcpy_chk', '__memmove_chk', '__mempcpy_chk', '__stpncpy_chk', '__strncat_chk',
        '__strncpy_chk',
    ),
    'ptr (ptr, ptr, ptr)': (
        '__strtok_r', 'strtok_r',
    ),
    'void (i64, ptr, ptr, i32)': (
        '__atomic_load', '__atomic_store',
    ),
    'void (ptr)': (
        '_ZdaPv', '_ZdlPv', '__cxa_guard_abort', '__cxa_guard_release', 'clearerr', 'flockfile',
        'free', 'funlockfile', 'perror', 'rewind',
    ),
    'void (ptr, i32)': (
        '_ZdaPvj', '_ZdlPvj',
    ),
    'void (ptr, i32, i32)': (
        '_ZdaPvjSt11align_val_t', '_ZdlPvjSt11align_val_t',
    ),
    'void (ptr, i64)': (
        '_ZdaPvSt11align_val_t', '_ZdaPvm', '_ZdlPvSt11align_val_t', '_ZdlPvm',
        '__kmpc_free_shared', 'bzero',
    ),
    'void (ptr, i64, i64)': (
        '_ZdaPvmSt11align_val_t', '_ZdlPvmSt11align_val_t',
    ),
    'void (ptr, i64, i64, ptr)': (
        'qsort',
    ),
    'void (ptr, i64, ptr)': (
        '_ZdaPvSt11align_val_tRKSt9nothrow_t', '_ZdlPvSt11align_val_tRKSt9nothrow_t',
    ),
    'void (ptr, ptr)': (
        '_ZdaPvRKSt9nothrow_t', '_ZdlPvRKSt9nothrow_t', 'setbuf',
    ),
    'void (ptr, ptr, i64)': (
        'bcopy',
    ),
    'x86_fp80 (ptr, ptr)': (
        'strtold',
    ),
    'x86_fp80 (x86_fp80)': (
        '__acoshl_finite', '__acosl_finite', '__asinl_finite', '__atanhl_finite', '__coshl_finite',
        '__exp10l_finite', '__exp2l_finite', '__expl_finite', '__log10l_finite', '__log2l_finite',
        '__logl_finite', '__sinhl_finite', '__sqrtl_finite', 'acoshl', 'acosl', 'asinhl', 'asinl',
        'atanhl', 'atanl', 'cbrtl', 'ceill', 'coshl', 'cosl', 'erfl', 'exp2l', 'expl', 'expm1l',
        'fabsl', 'floorl', 'log10l', 'log1pl', 'log2l', 'logbl', 'logl', 'nearbyintl', 'rintl',
        'roundevenl', 'roundl', 'sinhl', 'sinl', 'sqrtl', 'tanhl', 'tanl', 'truncl',
    ),
    'x86_fp80 (x86_fp80, i32)': (
        'ldexpl',
    ),
    'x86_fp80 (x86_fp80, ptr)': (
        'frexpl', 'modfl',
    ),
    'x86_fp80 (x86_fp80, x86_fp80)': (
        '__atan2l_finite', '__powl_finite', 'atan2l', 'cabsl', 'copysignl', 'fmaxl', 'fminl',
        'fmodl', 'powl', 'remainderl',
    ),
    'x86_fp80 (x86_fp80, x86_fp80, ptr)': (
        'remquol',
    ),
}

#: name -> IR function type (``ptr`` for any pointer)
PROTOTYPES: dict[str, str] = {name: sig for sig, names in _PROTOTYPES.items() for name in names}

_NAMES = frozenset(LIBRARY_FUNCTIONS)
_ADDED = frozenset(ADDED_AFTER_LLVM_14)
_LINUX_ONLY = frozenset(LINUX_ONLY)


def _shape(ftype) -> str:
    """A function type as :data:`PROTOTYPES` writes it: every pointer is ``ptr``."""
    import re

    return re.sub(r"ptr addrspace\(\d+\)", "ptr", ftype.render(True))


def is_library_function(fn, triple: str | None, llvm: int = 14) -> bool:
    """True if LLVM ``llvm`` takes function ``fn`` for a known C library function in a module of ``triple``.

    The name must be known (to that release, for that triple) and ``fn`` declared (or defined)
    with the expected prototype: LLVM does not recognise, say, ``declare void @sqrt()``."""
    name = fn.name or ""
    if name not in _NAMES or (llvm <= 14 and name in _ADDED):
        return False
    if name in _LINUX_ONLY and "linux" not in (triple or ""):
        return False
    return _shape(fn.ftype) == PROTOTYPES[name]


def is_library_call(call, module, llvm: int = 14, unavailable: frozenset[str] = frozenset()) -> bool:
    """True if ``call`` calls a known C library function (see :func:`is_library_function`) and is not ``nobuiltin``.

    ``unavailable``: names taken off the list, as ``opt -disable-builtin=NAME`` takes them off LLVM's."""
    from ..ir.module import resolve_attrs

    fn = call.called_function
    if fn is None or fn.name in unavailable:
        return False
    call_attrs = resolve_attrs(call.fn_attrs, module)
    if any(a.kind == "nobuiltin" and a.style != "string" for a in (*call_attrs, *resolve_attrs(fn.fn_attrs, module))) \
            and not any(a.kind == "builtin" for a in call_attrs):
        return False
    header = getattr(module, "header", None)
    return is_library_function(fn, getattr(header, "triple", None), llvm)
