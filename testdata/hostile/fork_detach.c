/*@kgate
name:    fork_detach
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
/* Hostile: on its first call the kernel leaves processes behind: ten children that sleep, and
 * ten that start a session of their own and fork again (their parents exit, so they are
 * orphans no process group reaches). All are named kgate-stray (tests/hostile.sh looks for
 * them). The answer is right: only what it leaves behind is wrong. */
#include <sys/prctl.h>
#include <unistd.h>

static void linger(void)
{
    prctl(PR_SET_NAME, "kgate-stray");
    for (;;) sleep(1000);
}

void relu(const float *x, float *y, int N)
{
    static int done;
    if (!done) {
        done = 1;
        for (int i = 0; i < 10; i++)
            if (fork() == 0) linger();
        for (int i = 0; i < 10; i++)
            if (fork() == 0) {
                setsid();
                if (fork() == 0) linger();
                _exit(0);
            }
    }
    for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
