/* stream_echo.c - benchmark (being written). */
int main(void) { return 0; }
