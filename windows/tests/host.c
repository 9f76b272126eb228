/* A game hosting for a native `dplay join`: Host on the given port, CREATE_PLAYER for the
 * joiner, its message, ours back to everyone, then DestroyPeer with data (the joiner's
 * session_ended shows it) and DESTROY_PLAYER. ENUM_HOSTS_QUERY is answered with response
 * data, which the native enumeration shows. With a second
 * port, Host gets two device addresses (one per port): GetLocalHostAddresses reports both,
 * and the joiner may come through either.
 * Usage: host.exe PORT [PORT2] */
#include "game.h"

/* Fails unless GetLocalHostAddresses reports exactly `ports`, in order. */
static void check_local_addresses(IDirectPlay8Peer *peer, const DWORD *ports, DWORD n)
{
    IDirectPlay8Address *addrs[4];
    DWORD count = 0;
    HRESULT hr = IDirectPlay8Peer_GetLocalHostAddresses(peer, addrs, &count, 0);
    CHECK(hr == DPNERR_BUFFERTOOSMALL && count == n, "GetLocalHostAddresses counted %lu (0x%08lx), not %lu",
          (unsigned long)count, (unsigned long)hr, (unsigned long)n);
    CHECK_HR(IDirectPlay8Peer_GetLocalHostAddresses(peer, addrs, &count, 0), "GetLocalHostAddresses");
    for (DWORD i = 0; i < n; i++) {
        DWORD port = 0, size = sizeof port, type = 0;
        CHECK_HR(IDirectPlay8Address_GetComponentByName(addrs[i], DPNA_KEY_PORT, &port, &size, &type),
                 "GetComponentByName(port)");
        CHECK(port == ports[i], "local host address %lu has port %lu, not %lu", (unsigned long)i,
              (unsigned long)port, (unsigned long)ports[i]);
        IDirectPlay8Address_Release(addrs[i]);
    }
    OK("GetLocalHostAddresses: %lu address(es), one per device", (unsigned long)n);
}

int main(int argc, char **argv)
{
    DWORD ports[2] = {arg_port(argc, argv, 1), argc > 2 ? arg_port(argc, argv, 2) : 0};
    DWORD n = ports[1] ? 2 : 1;
    IDirectPlay8Peer *peer = make_peer();
    seen.enum_reply = "wine host data";
    set_name(peer, L"winehost");
    if (n == 1) {
        host_on(peer, ports[0], L"wine session", DPNSESSION_MIGRATE_HOST);
    } else {
        DPN_APPLICATION_DESC d = app_desc(L"wine session", DPNSESSION_MIGRATE_HOST);
        IDirectPlay8Address *devices[2] = {make_address("127.0.0.1", ports[0]), make_address("127.0.0.1", ports[1])};
        CHECK_HR(IDirectPlay8Peer_Host(peer, &d, devices, 2, NULL, NULL, NULL, 0), "IDirectPlay8Peer::Host");
        OK("hosting on 127.0.0.1:%lu and 127.0.0.1:%lu", (unsigned long)ports[0], (unsigned long)ports[1]);
        IDirectPlay8Address_Release(devices[0]);
        IDirectPlay8Address_Release(devices[1]);
    }
    wait_count(&seen.create_players, 1, "CREATE_PLAYER for ourselves");
    check_local_addresses(peer, ports, n);
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.enum_queries, 1, "ENUM_HOSTS_QUERY of the native enumeration");
    OK("ENUM_HOSTS_QUERY: answered with response data \"%s\"", seen.enum_reply);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the native joiner");
    OK("a native member joined");
    wait_count(&seen.receives, 1, "the joiner's message");
    OK("received %lu bytes from it", (unsigned long)seen.last_receive_size);
    send_text(peer, DPNID_ALL_PLAYERS_GROUP, "hello from the wine host");
    OK("sent \"hello from the wine host\" to everyone");
    const char *bye = "goodbye from the wine host";
    CHECK_HR(IDirectPlay8Peer_DestroyPeer(peer, seen.players[1], bye, (DWORD)strlen(bye), 0), "DestroyPeer");
    wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER of the removed joiner");
    OK("DestroyPeer with \"%s\": DESTROY_PLAYER", bye);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
