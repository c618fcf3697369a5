// placeholder so the target exists until its sources land
