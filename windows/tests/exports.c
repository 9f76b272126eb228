/* The DLL as Windows' loader, COM and an installer see it: the five exports by name, the
 * answers with no object made, and that the DLL Wine loaded is ours (WINEDLLOVERRIDES). */
#include "game.h"

typedef HRESULT(WINAPI *GetClassObject)(REFCLSID, REFIID, void **);
typedef HRESULT(WINAPI *NoArgs)(void);
typedef HRESULT(WINAPI *Create)(const GUID *, void **, IUnknown *);

DEFINE_GUID(CLSID_NOT_OURS, 0x12345678, 0x1234, 0x1234, 0x12, 0x34, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc);

int main(void)
{
    HMODULE dll = LoadLibraryA("dpnet.dll");
    void *out = (void *)1;
    CHECK(dll != NULL, "LoadLibrary(dpnet.dll) failed (%lu)", GetLastError());
    check_our_dll();
    const char *names[] = {"DirectPlay8Create", "DllCanUnloadNow", "DllGetClassObject", "DllRegisterServer",
                           "DllUnregisterServer"};
    for (int i = 0; i < 5; i++)
        CHECK(GetProcAddress(dll, names[i]) != NULL, "dpnet.dll does not export %s", names[i]);
    OK("exports DirectPlay8Create DllCanUnloadNow DllGetClassObject DllRegisterServer DllUnregisterServer");
    CHECK(((NoArgs)GetProcAddress(dll, "DllRegisterServer"))() == S_OK, "DllRegisterServer is not S_OK");
    CHECK(((NoArgs)GetProcAddress(dll, "DllUnregisterServer"))() == S_OK, "DllUnregisterServer is not S_OK");
    OK("DllRegisterServer and DllUnregisterServer answer S_OK");
    HRESULT hr = ((NoArgs)GetProcAddress(dll, "DllCanUnloadNow"))();
    CHECK(hr == S_OK || hr == S_FALSE, "DllCanUnloadNow returned 0x%08lx", (unsigned long)hr);
    OK("DllCanUnloadNow answers 0x%08lx", (unsigned long)hr);
    hr = ((GetClassObject)GetProcAddress(dll, "DllGetClassObject"))(&CLSID_NOT_OURS, &IID_IClassFactory, &out);
    CHECK(hr == CLASS_E_CLASSNOTAVAILABLE && out == NULL, "DllGetClassObject(unknown class) returned 0x%08lx",
          (unsigned long)hr);
    OK("DllGetClassObject(an unknown CLSID) is CLASS_E_CLASSNOTAVAILABLE with a null pointer");
    out = (void *)1;
    hr = ((Create)GetProcAddress(dll, "DirectPlay8Create"))(&CLSID_NOT_OURS, &out, NULL);
    CHECK(FAILED(hr) && out == NULL, "DirectPlay8Create(an unknown IID) returned 0x%08lx", (unsigned long)hr);
    OK("DirectPlay8Create(an unknown IID) fails (0x%08lx) with a null pointer", (unsigned long)hr);
    return 0;
}
