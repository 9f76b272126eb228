/* Send completion and CancelAsyncOperation: a guaranteed SendTo to the native host completes
 * with SEND_COMPLETE S_OK, its handle and context; an enumeration of a silent port is
 * cancelled by its handle (ASYNC_OP_COMPLETE DPNERR_USERCANCEL), another by
 * DPNCANCEL_ENUM. Usage: cancel.exe HOST_PORT SILENT_PORT */
#include "game.h"

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
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
