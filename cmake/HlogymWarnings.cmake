# hlogym_warnings: the warning flags every hlogym target builds with. Our code
# is warning-free under -Wall -Wextra; third-party headers are SYSTEM includes.
add_library(hlogym_warnings INTERFACE)
target_compile_options(hlogym_warnings INTERFACE -Wall -Wextra)
