/* `cargo xtask dll-bench`: messages per second and round trip through our dpnet.dll under Wine,
 * against a native `dplay host --echo` (which sends every message back to its sender). A game's
 * small position updates (SIZE bytes, default 64), guaranteed and not: N ping-pongs one at a time
 * for the round trip (p50, p99), then N sent with at most WINDOW in flight for the rate.
 * Prints one "result: NAME VALUE UNIT" line per figure. Usage: bench.exe PORT [N] [SIZE] */
#include "game.h"

#define WINDOW 32
/* How long a non-guaranteed message may take before it counts as lost, in milliseconds. */
#define LOST_MS 1000

static LARGE_INTEGER freq;

static LONGLONG now(void)
{
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    return t.QuadPart;
}

static double us(LONGLONG ticks)
{
    return (double)ticks * 1e6 / (double)freq.QuadPart;
}

/* The message: the sender's counter, a sequence number, zeros to SIZE. */
static void send_stamped(IDirectPlay8Peer *peer, BYTE *buf, DWORD size, DWORD seq, DWORD flags)
{
    DPN_BUFFER_DESC b;
    DPNHANDLE h = 0;
    LONGLONG t = now();
    memcpy(buf, &t, 8);
    memcpy(buf + 8, &seq, 4);
    b.dwBufferSize = size;
    b.pBufferData = buf;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, DPNID_ALL_PLAYERS_GROUP, &b, 1, 0, NULL, &h, flags | DPNSEND_NOLOOPBACK);
    CHECK(hr == DPNSUCCESS_PENDING || hr == S_OK, "SendTo returned 0x%08lx", (unsigned long)hr);
}

/* Waits up to `ms` for a receive beyond `count`; FALSE on time out. */
static BOOL wait_receive(LONG count, DWORD ms)
{
    DWORD until = GetTickCount() + ms;
    while (InterlockedCompareExchange(&seen.receives, 0, 0) <= count) {
        LONG left = (LONG)(until - GetTickCount());
        if (left <= 0)
            return FALSE;
        WaitForSingleObject(seen.changed, (DWORD)left);
    }
    return TRUE;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* N ping-pongs: the round trip's p50 and p99 in microseconds. */
static void round_trips(IDirectPlay8Peer *peer, const char *kind, DWORD flags, DWORD n, DWORD size)
{
    BYTE *buf = calloc(size, 1);
    double *rtt = calloc(n, sizeof *rtt);
    DWORD got = 0, lost = 0;
    CHECK(buf && rtt, "out of memory");
    for (DWORD seq = 0; seq < n; seq++) {
        LONG before = InterlockedCompareExchange(&seen.receives, 0, 0);
        send_stamped(peer, buf, size, seq, flags);
        for (;;) {
            if (!wait_receive(before, flags & DPNSEND_GUARANTEED ? WAIT_MS : LOST_MS)) {
                CHECK(!(flags & DPNSEND_GUARANTEED), "no echo of guaranteed message %lu", (unsigned long)seq);
                lost++;
                break;
            }
            LONGLONG sent;
            DWORD echoed;
            EnterCriticalSection(&seen.lock);
            memcpy(&sent, seen.last_receive, 8);
            memcpy(&echoed, seen.last_receive + 8, 4);
            before = seen.receives;
            LeaveCriticalSection(&seen.lock);
            if (echoed == seq) {
                rtt[got++] = us(now() - sent);
                break;
            }
        }
    }
    CHECK(got > 0, "no %s echo came back", kind);
    qsort(rtt, got, sizeof *rtt, by_value);
    printf("result: %s_rtt_p50 %.1f us\n", kind, rtt[got / 2]);
    printf("result: %s_rtt_p99 %.1f us\n", kind, rtt[(got * 99) / 100 < got ? (got * 99) / 100 : got - 1]);
    printf("result: %s_rtt_lost %lu of %lu\n", kind, (unsigned long)lost, (unsigned long)n);
    fflush(stdout);
    free(buf);
    free(rtt);
}

/* N messages, at most WINDOW without their echo: echoes per second. */
static void rate(IDirectPlay8Peer *peer, const char *kind, DWORD flags, DWORD n, DWORD size)
{
    BYTE *buf = calloc(size, 1);
    LONG base = InterlockedCompareExchange(&seen.receives, 0, 0), forgiven = 0, got = 0;
    LONGLONG start = now(), last = start;
    CHECK(buf != NULL, "out of memory");
    for (DWORD seq = 0; seq < n; seq++) {
        /* A non-guaranteed message whose echo does not come within LOST_MS counts as lost. */
        while ((LONG)seq - (InterlockedCompareExchange(&seen.receives, 0, 0) - base) - forgiven >= WINDOW) {
            LONG before = InterlockedCompareExchange(&seen.receives, 0, 0);
            if (!wait_receive(before, flags & DPNSEND_GUARANTEED ? WAIT_MS : LOST_MS)) {
                CHECK(!(flags & DPNSEND_GUARANTEED), "guaranteed echoes stalled at %ld", (long)(before - base));
                forgiven = (LONG)seq - (before - base);
            }
        }
        send_stamped(peer, buf, size, seq, flags);
    }
    for (;;) {
        got = InterlockedCompareExchange(&seen.receives, 0, 0) - base;
        last = now();
        if (got >= (LONG)n || !wait_receive(got + base, flags & DPNSEND_GUARANTEED ? WAIT_MS : LOST_MS))
            break;
    }
    CHECK(!(flags & DPNSEND_GUARANTEED) || got >= (LONG)n, "%ld of %lu guaranteed echoes", (long)got,
          (unsigned long)n);
    if (got < (LONG)n)
        last -= (LONGLONG)LOST_MS * freq.QuadPart / 1000; /* the final wait found nothing */
    printf("result: %s_rate %.0f msg/s\n", kind, (double)got * 1e6 / us(last - start));
    printf("result: %s_rate_lost %ld of %lu\n", kind, (long)((LONG)n - got), (unsigned long)n);
    fflush(stdout);
    free(buf);
}

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    DWORD n = argc > 2 ? (DWORD)strtoul(argv[2], NULL, 10) : 2000;
    DWORD size = argc > 3 ? (DWORD)strtoul(argv[3], NULL, 10) : 64;
    CHECK(size >= 12 && size <= 4096, "SIZE must be 12 to 4096 bytes");
    CHECK(n > 0 && n <= 1000000, "N must be 1 to 1000000");
    QueryPerformanceFrequency(&freq);
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, L"bench");
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    round_trips(peer, "guaranteed", DPNSEND_GUARANTEED, n, size);
    round_trips(peer, "nonguaranteed", 0, n, size);
    rate(peer, "guaranteed", DPNSEND_GUARANTEED, n, size);
    rate(peer, "nonguaranteed", 0, n, size);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    CoUninitialize();
    return 0;
}
