// BlueZ's kernel-interface headers only (sockets, HCI ioctls, packet constants): our host stack is our own.
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
