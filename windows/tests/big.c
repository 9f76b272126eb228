/* A 200 KB guaranteed message each way between two Wine members: the host waits for the
 * joiner, each sends 204,800 bytes of a known pattern to the other and checks what arrives.
 * Usage: big.exe host|join PORT */
#include "game.h"

#define BIG 204800

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 2);
    int hosting = strcmp(argv[1], "host") == 0;
    static BYTE data[BIG];
    IDirectPlay8Peer *peer = make_peer();
    for (DWORD i = 0; i < BIG; i++)
        data[i] = (BYTE)(i * 7 + 3);
    if (hosting) {
        host_on(peer, port, L"big", 0);
        printf("ready\n");
        fflush(stdout);
    } else {
        connect_async(peer, "127.0.0.1", port);
    }
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for both members");
    DPN_BUFFER_DESC b = {BIG, data};
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, DPNID_ALL_PLAYERS_GROUP, &b, 1, 0, (void *)0xB1, &h,
                                         DPNSEND_GUARANTEED | DPNSEND_NOLOOPBACK);
    CHECK(hr == DPNSUCCESS_PENDING, "SendTo of 200 KB returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.send_completes, 1, "SEND_COMPLETE of 200 KB");
    CHECK_HR(seen.send_result, "SEND_COMPLETE's result");
    OK("sent 204800 bytes guaranteed: SEND_COMPLETE S_OK");
    wait_count(&seen.receives, 1, "the other member's 200 KB");
    CHECK(seen.last_receive_size == BIG, "received %lu bytes, not 204800", (unsigned long)seen.last_receive_size);
    CHECK(memcmp(seen.last_receive, data, sizeof seen.last_receive) == 0, "the 200 KB message's bytes differ");
    OK("received 204800 bytes in one RECEIVE, bytes as sent");
    Sleep(1000);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
