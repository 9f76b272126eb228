/* Send completion and CancelAsyncOperation: a guaranteed SendTo to the native host completes
 * with SEND_COMPLETE S_OK, its handle and context; an enumeration of a silent port is
 * cancelled by its handle (ASYNC_OP_COMPLETE DPNERR_USERCANCEL), another by
 * DPNCANCEL_ENUM; sends still queued behind large ones on the wire are cancelled by handle,
 * by DPNCANCEL_PLAYER_SENDS_PRIORITY_* and by DPNCANCEL_SEND (SEND_COMPLETE
 * DPNERR_USERCANCEL), a large one on the wire answers DPNERR_CANNOTCANCEL; the same for
 * DPNSEND_COMPLETEONPROCESS sends, the one on the wire completing once the host processed it.
 * Usage: cancel.exe HOST_PORT SILENT_PORT */
#include "game.h"

#define BIG (1000 * 1024)

/* The result of the SEND_COMPLETE with context `ctx` (one of the first 16), or S_FALSE. */
static HRESULT send_result_of(void *ctx)
{
    for (LONG i = 0; i < seen.send_completes && i < 16; i++)
        if (seen.send_contexts[i] == ctx)
            return seen.send_results[i];
    return S_FALSE;
}

static DPNHANDLE send_ctx(IDirectPlay8Peer *peer, DPNID to, BYTE *data, DWORD size, DWORD flags, UINT_PTR ctx)
{
    DPN_BUFFER_DESC b = {size, data};
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, to, &b, 1, 0, (void *)ctx, &h, DPNSEND_GUARANTEED | flags);
    CHECK(hr == DPNSUCCESS_PENDING && h != 0, "SendTo returned 0x%08lx", (unsigned long)hr);
    return h;
}

static void cancel_sends(IDirectPlay8Peer *peer, DPNID host)
{
    LONG before = seen.send_completes;
    BYTE *big = calloc(BIG, 1);
    DPNHANDLE first = send_ctx(peer, host, big, BIG, 0, 0xB0);
    send_ctx(peer, host, big, BIG, 0, 0xB1);
    send_ctx(peer, host, big, BIG, 0, 0xB2);
    DPNHANDLE one = send_ctx(peer, host, (BYTE *)"one", 3, 0, 0xC1);
    send_ctx(peer, host, (BYTE *)"high", 4, DPNSEND_PRIORITY_HIGH, 0xC2);
    send_ctx(peer, host, (BYTE *)"low", 3, DPNSEND_PRIORITY_LOW, 0xC3);
    send_ctx(peer, host, (BYTE *)"rest", 4, 0, 0xC4);
    CHECK_HR(IDirectPlay8Peer_CancelAsyncOperation(peer, host, DPNCANCEL_PLAYER_SENDS_PRIORITY_HIGH),
             "CancelAsyncOperation(DPNCANCEL_PLAYER_SENDS_PRIORITY_HIGH)");
    HRESULT hr = IDirectPlay8Peer_CancelAsyncOperation(peer, first, 0);
    CHECK(hr == DPNERR_CANNOTCANCEL, "cancelling a send on the wire returned 0x%08lx", (unsigned long)hr);
    CHECK_HR(IDirectPlay8Peer_CancelAsyncOperation(peer, one, 0), "CancelAsyncOperation(a queued send)");
    CHECK_HR(IDirectPlay8Peer_CancelAsyncOperation(peer, host, DPNCANCEL_PLAYER_SENDS_PRIORITY_LOW),
             "CancelAsyncOperation(DPNCANCEL_PLAYER_SENDS_PRIORITY_LOW)");
    hr = IDirectPlay8Peer_CancelAsyncOperation(peer, 0, DPNCANCEL_SEND);
    CHECK(hr == DPNERR_CANNOTCANCEL, "DPNCANCEL_SEND with a send on the wire returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.send_completes, before + 7, "SEND_COMPLETE of every send");
    for (UINT_PTR ctx = 0xC1; ctx <= 0xC4; ctx++)
        CHECK(send_result_of((void *)ctx) == DPNERR_USERCANCEL, "the queued send %lx completed with 0x%08lx",
              (unsigned long)ctx, (unsigned long)send_result_of((void *)ctx));
    CHECK_HR(send_result_of((void *)0xB0), "the send on the wire's SEND_COMPLETE");
    for (UINT_PTR ctx = 0xB1; ctx <= 0xB2; ctx++) {
        hr = send_result_of((void *)ctx);
        CHECK(hr == S_OK || hr == DPNERR_USERCANCEL, "a later large send completed with 0x%08lx", (unsigned long)hr);
    }
    OK("CancelAsyncOperation of sends: queued ones DPNERR_USERCANCEL, one on the wire DPNERR_CANNOTCANCEL");
    free(big);
}

/* DPNSEND_COMPLETEONPROCESS sends are cancelled as the others while none of their frames went
 * out; one on the wire answers DPNERR_CANNOTCANCEL and completes S_OK once the host processed
 * it (DN_PROCESS_COMPLETION). */
static void cancel_on_process(IDirectPlay8Peer *peer, DPNID host)
{
    LONG before = seen.send_completes;
    DWORD size = 600 * 1024;
    BYTE *big = calloc(size, 1);
    DPNHANDLE first = send_ctx(peer, host, big, size, DPNSEND_COMPLETEONPROCESS, 0xD0);
    DPNHANDLE queued = send_ctx(peer, host, (BYTE *)"queued", 6, DPNSEND_COMPLETEONPROCESS, 0xD1);
    HRESULT hr = IDirectPlay8Peer_CancelAsyncOperation(peer, first, 0);
    CHECK(hr == DPNERR_CANNOTCANCEL, "cancelling a COMPLETEONPROCESS send on the wire returned 0x%08lx",
          (unsigned long)hr);
    CHECK_HR(IDirectPlay8Peer_CancelAsyncOperation(peer, queued, 0), "CancelAsyncOperation(a queued COMPLETEONPROCESS send)");
    wait_count(&seen.send_completes, before + 2, "SEND_COMPLETE of both COMPLETEONPROCESS sends");
    hr = send_result_of((void *)0xD1);
    CHECK(hr == DPNERR_USERCANCEL, "the queued COMPLETEONPROCESS send completed with 0x%08lx", (unsigned long)hr);
    CHECK_HR(send_result_of((void *)0xD0), "the processed send's SEND_COMPLETE");
    OK("DPNSEND_COMPLETEONPROCESS: queued one DPNERR_USERCANCEL, one on the wire DPNERR_CANNOTCANCEL then S_OK");
    free(big);
}

static void cancel_enum(IDirectPlay8Peer *peer, DWORD silent, int by_handle)
{
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *to = make_address("127.0.0.1", silent), *device = make_address(NULL, 0);
    DPNHANDLE h = 0;
    LONG before = seen.async_completes;
    HRESULT hr = IDirectPlay8Peer_EnumHosts(peer, &d, to, device, NULL, 0, 0, 0, 0, (void *)0xCA, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async EnumHosts returned 0x%08lx", (unsigned long)hr);
    Sleep(200);
    hr = by_handle ? IDirectPlay8Peer_CancelAsyncOperation(peer, h, 0)
                   : IDirectPlay8Peer_CancelAsyncOperation(peer, 0, DPNCANCEL_ENUM);
    CHECK_HR(hr, "CancelAsyncOperation");
    wait_count(&seen.async_completes, before + 1, "ASYNC_OP_COMPLETE of the cancelled enumeration");
    CHECK(seen.async_result == DPNERR_USERCANCEL, "the cancelled enumeration completed with 0x%08lx",
          (unsigned long)seen.async_result);
    CHECK(seen.async_handle == h && seen.async_context == (void *)0xCA, "its completion names another operation");
    OK("CancelAsyncOperation(%s): ASYNC_OP_COMPLETE DPNERR_USERCANCEL", by_handle ? "handle" : "DPNCANCEL_ENUM");
    IDirectPlay8Address_Release(to);
    IDirectPlay8Address_Release(device);
}

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1), silent = arg_port(argc, argv, 2);
    IDirectPlay8Peer *peer = make_peer();
    cancel_enum(peer, silent, 1);
    cancel_enum(peer, silent, 0);
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    DPNID host = seen.players[0];
    DPN_BUFFER_DESC b = {5, (BYTE *)"ping!"};
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, host, &b, 1, 0, (void *)0x5C, &h, DPNSEND_GUARANTEED);
    CHECK(hr == DPNSUCCESS_PENDING && h != 0, "SendTo returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.send_completes, 1, "SEND_COMPLETE");
    CHECK_HR(seen.send_result, "SEND_COMPLETE's result");
    CHECK(seen.send_handle == h && seen.send_context == (void *)0x5C, "SEND_COMPLETE names another send");
    OK("SendTo: SEND_COMPLETE S_OK with its handle and context");
    hr = IDirectPlay8Peer_SendTo(peer, host, &b, 1, 0, NULL, &h, DPNSEND_GUARANTEED | DPNSEND_NOCOMPLETE);
    CHECK(SUCCEEDED(hr), "SendTo NOCOMPLETE returned 0x%08lx", (unsigned long)hr);
    Sleep(500);
    CHECK(seen.send_completes == 1, "a NOCOMPLETE send completed");
    OK("DPNSEND_NOCOMPLETE: no SEND_COMPLETE");
    cancel_sends(peer, find_host(peer));
    cancel_on_process(peer, find_host(peer));
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
