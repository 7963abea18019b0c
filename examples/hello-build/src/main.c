#include "greet.h"

int main(void)
{
    greet("qk");
    return 0;
}
