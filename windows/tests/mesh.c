/* A mesh of three: this program as host or joiner, a native `dplay join` and a second Wine
 * process. Each Wine member waits for all three players, then says hello to everyone (the
 * harness checks the native member got both), and waits for the other Wine member's hello.
 * Usage: mesh.exe host|join PORT */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 2);
    int hosting = strcmp(argv[1], "host") == 0;
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, hosting ? L"wine-host" : L"wine-join");
    if (hosting) {
        host_on(peer, port, L"mesh", DPNSESSION_MIGRATE_HOST);
        printf("ready\n");
        fflush(stdout);
    } else {
        connect_async(peer, "127.0.0.1", port);
    }
    wait_count(&seen.create_players, 3, "CREATE_PLAYER for all three members");
    OK("all three members known");
    send_text(peer, DPNID_ALL_PLAYERS_GROUP, hosting ? "hello from wine-host" : "hello from wine-join");
    OK("said hello to everyone");
    wait_count(&seen.receives, 1, "the other Wine member's hello");
    OK("got %lu bytes from another member", (unsigned long)seen.last_receive_size);
    Sleep(1000);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
