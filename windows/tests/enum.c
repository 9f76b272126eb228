/* Enumeration as a game's "find sessions" screen does it, against a native `dplay host`:
 * synchronous EnumHosts, then asynchronous with a handle, ENUM_HOSTS_RESPONSE and
 * ASYNC_OP_COMPLETE. Usage: enum.exe PORT SESSION_NAME */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    WCHAR want[128];
    CHECK(argc > 2, "usage: enum.exe PORT SESSION_NAME");
    MultiByteToWideChar(CP_ACP, 0, argv[2], -1, want, 128);
    IDirectPlay8Peer *peer = make_peer();
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *to = make_address("127.0.0.1", port), *device = make_address(NULL, 0);
    DPNHANDLE h = 0;

    HRESULT hr = IDirectPlay8Peer_EnumHosts(peer, &d, to, device, NULL, 0, 2, 300, 1500, NULL, NULL, DPNENUMHOSTS_SYNC);
    CHECK_HR(hr, "synchronous EnumHosts");
    CHECK(seen.enum_responses >= 1, "synchronous EnumHosts returned with no ENUM_HOSTS_RESPONSE");
    CHECK(lstrcmpW(seen.session_name, want) == 0, "the session is named %ls, not %s", seen.session_name, argv[2]);
    OK("synchronous EnumHosts: %ld response(s), session \"%s\"", seen.enum_responses, argv[2]);

    LONG before = seen.enum_responses;
    hr = IDirectPlay8Peer_EnumHosts(peer, &d, to, device, NULL, 0, 2, 300, 1500, (void *)0xE0, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async EnumHosts returned 0x%08lx", (unsigned long)hr);
    CHECK(h != 0, "async EnumHosts gave no handle");
    wait_count(&seen.enum_responses, before + 1, "an ENUM_HOSTS_RESPONSE");
    wait_count(&seen.async_completes, 1, "ASYNC_OP_COMPLETE of the enumeration");
    CHECK(seen.async_handle == h, "ASYNC_OP_COMPLETE names handle %lx, not %lx", (unsigned long)seen.async_handle,
          (unsigned long)h);
    CHECK(seen.async_context == (void *)0xE0, "ASYNC_OP_COMPLETE lost the user context");
    CHECK_HR(seen.async_result, "ASYNC_OP_COMPLETE's result");
    OK("asynchronous EnumHosts: response, then ASYNC_OP_COMPLETE with its handle and context");

    IDirectPlay8Address_Release(to);
    IDirectPlay8Address_Release(device);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
