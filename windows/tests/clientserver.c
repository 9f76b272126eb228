/* Client/server both ways: as IDirectPlay8Client joining a native `dplay host --client-server`,
 * or as IDirectPlay8Server hosting for a native `dplay join`.
 * Usage: clientserver.exe client|server PORT */
#include "game.h"

static void as_client(DWORD port)
{
    IDirectPlay8Client *client = NULL;
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    DPN_PLAYER_INFO info;
    DPN_BUFFER_DESC b;
    DPNHANDLE h = 0;
    const char *text = "hello from the wine client";
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8Client, NULL, CLSCTX_INPROC_SERVER, &IID_IDirectPlay8Client,
                              (void **)&client),
             "CoCreateInstance(CLSID_DirectPlay8Client)");
    check_our_dll();
    CHECK_HR(IDirectPlay8Client_Initialize(client, NULL, handler, 0), "IDirectPlay8Client::Initialize");
    memset(&info, 0, sizeof info);
    info.dwSize = sizeof info;
    info.dwInfoFlags = DPNINFO_NAME;
    info.pwszName = L"wine client";
    CHECK_HR(IDirectPlay8Client_SetClientInfo(client, &info, NULL, &h, DPNSETCLIENTINFO_SYNC), "SetClientInfo");
    IDirectPlay8Address *to = make_address("127.0.0.1", port), *device = make_address(NULL, 0);
    HRESULT hr = IDirectPlay8Client_Connect(client, &d, to, device, NULL, NULL, NULL, 0, NULL, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async Connect returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.connect_completes, 1, "CONNECT_COMPLETE");
    CHECK_HR(seen.connect_result, "CONNECT_COMPLETE's result");
    OK("the client connected to the native server");
    b.dwBufferSize = (DWORD)strlen(text);
    b.pBufferData = (BYTE *)text;
    hr = IDirectPlay8Client_Send(client, &b, 1, 0, (void *)0x5E, &h, DPNSEND_GUARANTEED);
    CHECK(hr == DPNSUCCESS_PENDING, "Send returned 0x%08lx", (unsigned long)hr);
    wait_count(&seen.send_completes, 1, "SEND_COMPLETE");
    CHECK_HR(seen.send_result, "SEND_COMPLETE's result");
    OK("sent \"%s\" to the server: SEND_COMPLETE S_OK", text);
    Sleep(500);
    CHECK_HR(IDirectPlay8Client_Close(client, 0), "Close");
    IDirectPlay8Client_Release(client);
}

static void as_server(DWORD port)
{
    IDirectPlay8Server *server = NULL;
    DPN_APPLICATION_DESC d = app_desc(L"wine server", DPNSESSION_CLIENT_SERVER);
    DPN_PLAYER_INFO info;
    DPN_BUFFER_DESC b;
    DPNHANDLE h = 0;
    const char *text = "hello from the wine server";
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8Server, NULL, CLSCTX_INPROC_SERVER, &IID_IDirectPlay8Server,
                              (void **)&server),
             "CoCreateInstance(CLSID_DirectPlay8Server)");
    check_our_dll();
    CHECK_HR(IDirectPlay8Server_Initialize(server, NULL, handler, 0), "IDirectPlay8Server::Initialize");
    memset(&info, 0, sizeof info);
    info.dwSize = sizeof info;
    info.dwInfoFlags = DPNINFO_NAME;
    info.pwszName = L"wine server";
    CHECK_HR(IDirectPlay8Server_SetServerInfo(server, &info, NULL, &h, DPNSETSERVERINFO_SYNC), "SetServerInfo");
    IDirectPlay8Address *device = make_address("127.0.0.1", port);
    CHECK_HR(IDirectPlay8Server_Host(server, &d, &device, 1, NULL, NULL, NULL, 0), "IDirectPlay8Server::Host");
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the native client");
    OK("a native client joined");
    wait_count(&seen.receives, 1, "the client's message");
    OK("received %lu bytes from it", (unsigned long)seen.last_receive_size);
    b.dwBufferSize = (DWORD)strlen(text);
    b.pBufferData = (BYTE *)text;
    HRESULT hr = IDirectPlay8Server_SendTo(server, DPNID_ALL_PLAYERS_GROUP, &b, 1, 0, NULL, &h,
                                           DPNSEND_GUARANTEED | DPNSEND_NOLOOPBACK);
    CHECK(hr == DPNSUCCESS_PENDING, "SendTo returned 0x%08lx", (unsigned long)hr);
    OK("sent \"%s\" to every client", text);
    wait_count(&seen.destroy_players, 1, "DESTROY_PLAYER when the client leaves");
    OK("DESTROY_PLAYER when it left");
    CHECK_HR(IDirectPlay8Server_Close(server, 0), "Close");
    IDirectPlay8Server_Release(server);
}

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 2);
    seen_init();
    CHECK_HR(CoInitializeEx(NULL, COINIT_MULTITHREADED), "CoInitializeEx");
    if (strcmp(argv[1], "client") == 0)
        as_client(port);
    else
        as_server(port);
    return 0;
}
