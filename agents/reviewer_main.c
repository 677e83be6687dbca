/* placeholder until the real entry point lands */
int main(void)
{
    return 0;
}
