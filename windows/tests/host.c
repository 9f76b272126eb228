/* A game hosting for a native `dplay join`: Host on the given port, CREATE_PLAYER for the
 * joiner, its message, ours back to everyone, DESTROY_PLAYER when it leaves.
 * Usage: host.exe PORT */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, L"winehost");
    host_on(peer, port, L"wine session", DPNSESSION_MIGRATE_HOST);
    wait_count(&seen.create_players, 1, "CREATE_PLAYER for ourselves");
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the native joiner");
    OK("a native member joined");
    wait_count(&seen.receives, 1, "the joiner's message");
    OK("received %lu bytes from it", (unsigned long)seen.last_receive_size);
    send_text(peer, DPNID_ALL_PLAYERS_GROUP, "hello from the wine host");
    OK("sent \"hello from the wine host\" to everyone");
    wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER when it leaves");
    OK("DESTROY_PLAYER when it left");
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
