/* compat.c - shims the test harness kept for callers of the old API.
 * Each takes the old arguments and ignores most of them, so gcc -Wextra
 * warns about every one: a build that prints pages of warnings, as many
 * real ones do, before the line that matters. */
#include "compat.h"

int compat_open_01(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_01(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_02(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_02(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_03(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_03(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_04(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_04(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_05(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_05(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_06(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_06(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_07(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_07(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_08(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_08(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_09(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_09(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_10(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_10(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_11(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_11(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_12(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_12(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_13(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_13(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_14(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_14(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_15(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_15(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_16(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_16(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_17(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_17(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_18(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_18(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_19(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_19(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_20(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_20(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_21(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_21(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_22(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_22(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_23(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_23(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_24(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_24(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_25(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_25(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_26(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_26(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_27(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_27(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_28(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_28(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_29(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_29(int fd, long offset, int whence)
{
    return offset;
}

int compat_open_30(const char *path, int flags, int mode)
{
    return path != 0;
}

long compat_seek_30(int fd, long offset, int whence)
{
    return offset;
}

