/* Groups and peer info against a native host: our name set before Connect is the name the
 * host sees; a group created (its request not cancellable), joined, its info read back; the
 * host's name read with GetPeerInfo. Usage: groups.exe PORT */
#include "game.h"
#include <dplobby8.h>

/* A game that was not lobby-launched: its lobbied application's connection handle is 0, and
 * RegisterLobby with it answers DPNERR_INVALIDPARAM (no lobby connection). */
static void register_lobby(IDirectPlay8Peer *peer)
{
    IDirectPlay8LobbiedApplication *app = NULL;
    DPNHANDLE connection = 1;
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8LobbiedApplication, NULL, CLSCTX_INPROC_SERVER,
                              &IID_IDirectPlay8LobbiedApplication, (void **)&app),
             "CoCreateInstance(LobbiedApplication)");
    CHECK_HR(IDirectPlay8LobbiedApplication_Initialize(app, NULL, handler, &connection, 0),
             "IDirectPlay8LobbiedApplication::Initialize");
    CHECK(connection == 0, "not lobby-launched, yet the connection handle is %lu", (unsigned long)connection);
    HRESULT hr = IDirectPlay8Peer_RegisterLobby(peer, connection, app, DPNLOBBY_REGISTER);
    CHECK(hr == DPNERR_INVALIDPARAM, "RegisterLobby with no lobby returned 0x%08lx", (unsigned long)hr);
    IDirectPlay8LobbiedApplication_Close(app, 0);
    IDirectPlay8LobbiedApplication_Release(app);
    OK("RegisterLobby with no lobby: DPNERR_INVALIDPARAM");
}

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    IDirectPlay8Peer *peer = make_peer();
    set_name(peer, L"wine pilot");
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    DPNID host = 0;
    for (int i = 0; i < seen.player_count; i++) {
        BYTE buf[512];
        DPN_PLAYER_INFO *info = peer_info(peer, seen.players[i], buf);
        if (info->dwPlayerFlags & DPNPLAYER_HOST) {
            host = seen.players[i];
            CHECK(info->pwszName && lstrcmpW(info->pwszName, L"host") == 0, "the host is not named \"host\"");
        } else if (info->dwPlayerFlags & DPNPLAYER_LOCAL) {
            CHECK(info->pwszName && lstrcmpW(info->pwszName, L"wine pilot") == 0, "we are not \"wine pilot\"");
        }
    }
    CHECK(host != 0, "no player has DPNPLAYER_HOST");
    OK("GetPeerInfo: the host is \"host\", we are \"wine pilot\"");
    register_lobby(peer);

    DPN_GROUP_INFO g;
    DPNHANDLE h = 0;
    memset(&g, 0, sizeof g);
    g.dwSize = sizeof g;
    g.dwInfoFlags = DPNINFO_NAME;
    g.pwszName = L"wine squadron";
    HRESULT hr = IDirectPlay8Peer_CreateGroup(peer, &g, (void *)0x6C, (void *)0xAC, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async CreateGroup returned 0x%08lx", (unsigned long)hr);
    /* Only sends, enumerations and the connect can be cancelled (DirectPlay 8 documentation). */
    hr = IDirectPlay8Peer_CancelAsyncOperation(peer, h, 0);
    CHECK(hr == DPNERR_CANNOTCANCEL, "cancelling CreateGroup returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.create_groups, 1, "CREATE_GROUP");
    wait_count(&seen.async_completes, 1, "ASYNC_OP_COMPLETE of CreateGroup");
    CHECK_HR(seen.async_result, "CreateGroup's completion");
    OK("CreateGroup: not cancellable (DPNERR_CANNOTCANCEL), CREATE_GROUP and ASYNC_OP_COMPLETE S_OK");
    Sleep(1000);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}
