/* Host migration on Close: the Wine host (MIGRATE_HOST) waits for a native member and a
 * second Wine member, then closes; the Wine joiner must get HOST_MIGRATE naming a remaining
 * member and DESTROY_PLAYER for the old host. Usage: migrate.exe host|join PORT */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 2);
    IDirectPlay8Peer *peer = make_peer();
    if (strcmp(argv[1], "host") == 0) {
        set_name(peer, L"old host");
        host_on(peer, port, L"migrate", DPNSESSION_MIGRATE_HOST);
        printf("ready\n");
        fflush(stdout);
        wait_count(&seen.create_players, 3, "CREATE_PLAYER for both members");
        Sleep(1000);
        CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close (the host leaves)");
        OK("the host closed with two members left");
    } else {
        set_name(peer, L"wine member");
        connect_async(peer, "127.0.0.1", port);
        wait_count(&seen.host_migrates, 1, "HOST_MIGRATE");
        CHECK(seen.new_host != 0, "HOST_MIGRATE names no new host");
        OK("HOST_MIGRATE: the new host is 0x%08lx", (unsigned long)seen.new_host);
        wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER for the old host");
        OK("DESTROY_PLAYER for the old host");
        CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    }
    IDirectPlay8Peer_Release(peer);
    return 0;
}
