/* A game joining a native `dplay host`: SetPeerInfo, async Connect, CREATE_PLAYER for the host
 * and itself, a guaranteed message to everyone (the harness checks the host printed it), a
 * message from a native member that joins after us, Close. Usage: join.exe PORT */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, L"wine");
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    OK("CREATE_PLAYER for the host and for us");
    send_text(peer, DPNID_ALL_PLAYERS_GROUP, "hello from wine");
    OK("sent \"hello from wine\" to everyone (guaranteed)");
    /* The harness starts a native member now; it says hello to everyone. */
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.receives, 1, "a message from the native member");
    OK("received %lu bytes from a native member", (unsigned long)seen.last_receive_size);
    wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER when the native member leaves");
    OK("DESTROY_PLAYER when it left");
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    CoUninitialize();
    return 0;
}
