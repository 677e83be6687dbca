/* dedup: copy standard input to standard output, leaving out each line
 * that equals the line before it (like uniq). Lines up to 1023 bytes. */
#include <stdio.h>
#include <string.h>

int main(void)
{
    char prev[1024] = "", line[1024];
    int first = 1;

    while (fgets(line, sizeof(line), stdin)) {
        if (!first && strncmp(line, prev, strlen(prev) - 1) == 0)
            continue;
        strcpy(prev, line);
        first = 0;
        fputs(line, stdout);
    }
    return 0;
}
