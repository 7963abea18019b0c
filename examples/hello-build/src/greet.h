#pragma once
void greet(const char *who);
