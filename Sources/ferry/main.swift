import FerryService
print("ferry")
