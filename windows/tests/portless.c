/* A game's "find sessions on this machine" with no port: EnumHosts to a hostname alone goes to
 * UDP 6073 (DirectPlay's enumeration port, MC-DPLHP 1.9), where a host on another port answers
 * unless it hosts with DPNSESSION_NODPNSVR. The finder then joins the address the response came
 * from, as a game does. Both sides are this program, each in its own Wine process.
 *
 * Usage: portless.exe host PORT [nodpnsvr]   host on 127.0.0.1:PORT until the finder joined
 *                                            and left
 *        portless.exe find PORT [nodpnsvr]   enumerate 127.0.0.1 with no port: the session is
 *                                            found there, its response names PORT (with
 *                                            nodpnsvr: nothing is found there, and PORT itself
 *                                            answers); then join the responding address */
/* winsock2.h before windows.h (which game.h includes), for the check of 6073. */
#include <winsock2.h>
#include "game.h"

static WCHAR SESSION[] = L"portless session";

/* Fails clearly when another program holds UDP 6073 on loopback: our host could not answer
 * there, and whatever holds it would answer instead. */
static void check_6073_free(void)
{
    WSADATA wsa;
    struct sockaddr_in a;
    CHECK(WSAStartup(MAKEWORD(2, 2), &wsa) == 0, "WSAStartup");
    SOCKET s = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    CHECK(s != INVALID_SOCKET, "socket");
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(6073);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0,
          "UDP 127.0.0.1:6073 is taken by another program (WSA error %d): this test needs it free",
          WSAGetLastError());
    closesocket(s);
    WSACleanup();
    OK("UDP 127.0.0.1:6073 is free");
}

static DWORD port_of(IDirectPlay8Address *a)
{
    DWORD port = 0, size = sizeof port, type = 0;
    CHECK_HR(IDirectPlay8Address_GetComponentByName(a, DPNA_KEY_PORT, &port, &size, &type),
             "GetComponentByName(port) of the response's sender");
    return port;
}

/* A synchronous enumeration of `to` (2 queries 300 ms apart): how many responses came. */
static LONG enumerate(IDirectPlay8Peer *peer, IDirectPlay8Address *to)
{
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *device = make_address(NULL, 0);
    LONG before = seen.enum_responses;
    HRESULT hr = IDirectPlay8Peer_EnumHosts(peer, &d, to, device, NULL, 0, 2, 300, 1000, NULL, NULL, DPNENUMHOSTS_SYNC);
    CHECK_HR(hr, "synchronous EnumHosts");
    IDirectPlay8Address_Release(device);
    return seen.enum_responses - before;
}

static void host(DWORD port, DWORD flags)
{
    check_6073_free();
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, L"portless host");
    host_on(peer, port, SESSION, flags);
    wait_count(&seen.create_players, 1, "CREATE_PLAYER for ourselves");
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the finder");
    OK("the finder joined");
    wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER when the finder leaves");
    OK("the finder left");
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
}

static void find(DWORD port, int nodpnsvr)
{
    IDirectPlay8Peer *peer = make_peer();
    IDirectPlay8Address *machine = make_address("127.0.0.1", 0);
    LONG found = enumerate(peer, machine);
    if (nodpnsvr) {
        CHECK(found == 0, "a NODPNSVR session answered %ld time(s) on 6073", found);
        OK("port-less EnumHosts: no answer on 6073 from a DPNSESSION_NODPNSVR host");
        IDirectPlay8Address *direct = make_address("127.0.0.1", port);
        found = enumerate(peer, direct);
        IDirectPlay8Address_Release(direct);
        CHECK(found >= 1, "the NODPNSVR host does not answer on its own port %lu either", (unsigned long)port);
        OK("it answers on its own port");
    } else {
        CHECK(found >= 1, "port-less EnumHosts found nothing through UDP 6073");
        CHECK(lstrcmpW(seen.session_name, SESSION) == 0, "the session found is named %ls", seen.session_name);
        OK("port-less EnumHosts: %ld response(s) through UDP 6073", found);
    }
    CHECK(seen.enum_sender != NULL, "ENUM_HOSTS_RESPONSE had no sender address");
    DWORD from = port_of(seen.enum_sender);
    CHECK(from == port, "the response came from port %lu, not the game's %lu", (unsigned long)from,
          (unsigned long)port);
    OK("the response names the game's port %lu", (unsigned long)from);

    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *device = make_address(NULL, 0);
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_Connect(peer, &d, seen.enum_sender, device, NULL, NULL, NULL, 0, NULL, NULL, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async Connect returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.connect_completes, 1, "CONNECT_COMPLETE");
    CHECK_HR(seen.connect_result, "CONNECT_COMPLETE's result");
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    OK("joined the session at the address the response came from");
    IDirectPlay8Address_Release(device);
    IDirectPlay8Address_Release(machine);
    IDirectPlay8Address_Release(seen.enum_sender);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
}

int main(int argc, char **argv)
{
    CHECK(argc > 2, "usage: portless.exe host|find PORT [nodpnsvr]");
    DWORD port = arg_port(argc, argv, 2);
    int nodpnsvr = argc > 3 && strcmp(argv[3], "nodpnsvr") == 0;
    if (strcmp(argv[1], "host") == 0)
        host(port, DPNSESSION_MIGRATE_HOST | (nodpnsvr ? DPNSESSION_NODPNSVR : 0));
    else
        find(port, nodpnsvr);
    return 0;
}
