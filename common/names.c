/* Enum names, both ways (see names.h). */
#include "common/names.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"

const char *tnd_names_name(const tnd_names *t, int v)
{
    return v >= 0 && v < t->count && t->names[v] ? t->names[v] : "?";
}

int tnd_names_parse(int *out, const tnd_names *t, const char *s)
{
    char *shown, *known;

    for (int v = 0; v < t->count; v++) {
        if (t->names[v] && strcmp(t->names[v], s) == 0) {
            *out = v;
            return 0;
        }
    }
    shown = tnd_str_one_line(s, 60);
    known = tnd_names_list(t);
    tnd_error_set("unknown %s '%s' (known: %s)", t->what, shown, known);
    free(known);
    free(shown);
    return -1;
}

char *tnd_names_list(const tnd_names *t)
{
    tnd_buf list;

    tnd_buf_init(&list, TND_BUF_NOCAP);
    for (int v = 0; v < t->count; v++)
        if (t->names[v])
            tnd_buf_printf(&list, "%s%s", list.len ? ", " : "", t->names[v]);
    return tnd_buf_detach(&list, NULL);
}
