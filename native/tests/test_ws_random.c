#include "ws_testutil.h"
int main(void) { return 0; }
